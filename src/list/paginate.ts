import type { Interfaces } from '@oclif/core'
import { AgentError } from '../errors/agent-error.js'
import { Flags } from '../flags.js'
import { compareKeys, decodeCursor, encodeCursor, type SortKey } from './cursor.js'

export type { SortKey } from './cursor.js'

/** A page of a list (spec 002 §8). */
export type Page<T> = {
  /** The items of this page. */
  items: T[]
  /** How many items this page holds. */
  count: number
  /** The cursor of the next page (`--cursor`), or null on the last. */
  next_cursor: string | null
  /** Whether another page follows. */
  has_more: boolean
}

/** Bounds of a list command's `--limit`: never unbounded. */
export type PaginationOptions = {
  /** `--limit` when the call gives none (default 20). */
  defaultLimit?: number
  /** The largest `--limit` accepted (default 100). */
  maxLimit?: number
}

/** What `--cursor` says in `reference` and `--help`: filters are repeated, never carried. */
export const CURSOR_DESCRIPTION =
  'Continue after the page that returned this next_cursor. Repeat the same filters, sort and --limit: a cursor is bound to the query that made it, and under another query it is E_VALIDATION.'

/** `--limit` and `--cursor` for a list command. */
export function paginationFlags(options: PaginationOptions = {}): {
  limit: Interfaces.OptionFlag<number>
  cursor: Interfaces.OptionFlag<string | undefined>
} {
  const { defaultLimit = 20, maxLimit = 100 } = options
  return {
    limit: Flags.integer({
      min: 1,
      max: maxLimit,
      default: defaultLimit,
      description: `Items per page (1-${maxLimit}).`,
    }),
    cursor: Flags.string({ description: CURSOR_DESCRIPTION }),
  }
}

/** What {@link paginate} needs. */
export type PaginateOptions<T> = {
  /** Every item the query selects, in any order: they are ordered by `sortKey` here. */
  items: readonly T[]
  /**
   * The declared sort key: unique per item (end it with the id when it is not), ordered ascending, or descending
   * with `order: 'desc'`. Pages are cut on its value (keyset), so items inserted or deleted before the cursor
   * neither repeat nor skip. Default: the item's `id` (decimal-integer ids order numerically).
   */
  sortKey?: ((item: T) => SortKey) | undefined
  /** The order of `sortKey` (default `asc`). */
  order?: 'asc' | 'desc' | undefined
  /** Everything that selects and orders the items (filters, sort, page size, the command): the cursor binds it. */
  query: Record<string, unknown>
  /** The page size (`--limit`). */
  limit: number
  /** The cursor the call gave (`--cursor`), if any: the page starts after it. */
  cursor?: string | undefined
  /** Who minted the cursor (tool and command); a cursor from another tool or command does not verify. */
  issuer: string
}

/** The result of {@link paginate}: the page, and how many items follow it (for `meta.truncation_hint`). */
export type Paginated<T> = {
  /** The page. */
  page: Page<T>
  /** How many items follow it. */
  remaining: number
}

function byId(item: unknown): SortKey {
  const id = (item as { id?: unknown } | null)?.id
  if (typeof id === 'string' || typeof id === 'number') return id
  throw new AgentError('E_INTERNAL', 'paginate(): an item has no string or number `id`; pass sortKey')
}

/**
 * Cut one page out of a list by keyset on the declared sort key. The cursor names the last item's key and binds
 * the query (MAC-checked): one edited, truncated or replayed under another query is `E_VALIDATION`.
 */
export function paginate<T>(options: PaginateOptions<T>): Paginated<T> {
  const keyOf = options.sortKey ?? (byId as (item: T) => SortKey)
  const sign = options.order === 'desc' ? -1 : 1
  const keyed = options.items.map((item) => ({ item, key: keyOf(item) }))
  keyed.sort((a, b) => sign * compareKeys(a.key, b.key))
  const after = options.cursor ? decodeCursor(options.cursor, options.issuer, options.query) : undefined
  const rest = after === undefined ? keyed : keyed.filter((k) => sign * compareKeys(k.key, after) > 0)
  const taken = rest.slice(0, options.limit)
  const hasMore = rest.length > taken.length
  const last = taken.at(-1)
  const next = hasMore && last ? encodeCursor(last.key, options.issuer, options.query) : null
  return {
    page: { items: taken.map((k) => k.item), count: taken.length, next_cursor: next, has_more: hasMore },
    remaining: rest.length - taken.length,
  }
}

/** Flags that only shape how output is printed: they do not change the query, so they are not bound. */
const PRESENTATION_ONLY = new Set(['cursor'])

/** The query a list call binds into its cursor: its arguments and flags, without `--cursor` and `skip` flags. */
export function listQuery(
  command: string,
  parsed: { flags?: Record<string, unknown>; args?: Record<string, unknown> } | undefined,
  skip: ReadonlySet<string>,
): Record<string, unknown> {
  const query: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(parsed?.flags ?? {}))
    if (!PRESENTATION_ONLY.has(name) && !skip.has(name) && value !== undefined) query[name] = value
  const args = Object.fromEntries(Object.entries(parsed?.args ?? {}).filter(([, v]) => v !== undefined))
  return Object.keys(args).length > 0 ? { ...query, _command: command, _args: args } : { ...query, _command: command }
}

/**
 * `meta.truncated` and its hint for a page: set only when items were actually left out. Without `remaining` (a
 * list over an upstream, which does not say how many follow) the hint says only that more follow.
 */
export function truncationMeta(
  paginated: { page: Page<unknown>; remaining?: number | undefined },
  options: { limit: number; maxLimit?: number | undefined },
): { truncated: true; truncation_hint: string } | undefined {
  if (!paginated.page.has_more) return undefined
  const widen =
    options.maxLimit && options.limit < options.maxLimit
      ? `; or start over with a higher --limit (max ${options.maxLimit})`
      : ''
  const more = paginated.remaining === undefined ? 'more items follow' : `${paginated.remaining} more`
  return {
    truncated: true,
    truncation_hint: `${more}: run the same command with the same filters and --cursor ${paginated.page.next_cursor}${widen}`,
  }
}
