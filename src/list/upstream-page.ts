import { AgentError, isAgentError } from '../errors/agent-error.js'
import type { Page } from './paginate.js'
import { decodeUpstreamCursor, encodeUpstreamCursor, type UpstreamPosition } from './upstream-cursor.js'

/** What the page fetcher of {@link UpstreamPageOptions} is asked for: one upstream page. */
export type UpstreamPageRequest = {
  /** The upstream's cursor or page token to continue from, as the upstream returned it; undefined: its first page. */
  token: string | undefined
  /** This call's `--limit`: ask the upstream for this many items (its page size), when it takes a page size. */
  limit: number
}

/** One upstream page, as the page fetcher returns it. */
export type UpstreamPageResult<T> = {
  /** The page's items, in the upstream's order. */
  items: readonly T[]
  /** The upstream's cursor or page token of the page after this one; null, undefined or '' at the end of the list. */
  next: string | null | undefined
}

/** What `this.upstreamPage()` takes: the call's `--limit`/`--cursor` and how to fetch one upstream page. */
export type UpstreamPageOptions<T> = {
  /** This call's `--limit` (from `paginationFlags()`): at most this many items are returned. */
  limit: number
  /** This call's `--cursor`, as given: verified before anything goes upstream. */
  cursor?: string | undefined
  /** The `maxLimit` given to `paginationFlags()`, named in `meta.truncation_hint`. */
  maxLimit?: number
  /**
   * Fetch one page of the upstream, continuing from `token` (its own cursor or page token; undefined for the
   * first page), asking for `limit` items. Called exactly once per call. Throw the HTTP client's errors as they are:
   * a 400 or 410 answered to a `token` becomes `E_CONFLICT` `cursor_expired`.
   */
  fetchPage: (request: UpstreamPageRequest) => Promise<UpstreamPageResult<T>>
}

/** Statuses an upstream answers a page token it no longer honours with (expired, or the list changed under it). */
const STALE = new Set([400, 410])

function stale(error: unknown, position: UpstreamPosition): unknown {
  if (position.token === undefined || !isAgentError(error)) return error
  const upstream = error.details.upstream as { status?: unknown } | undefined
  if (!STALE.has(upstream?.status as number)) return error
  return new AgentError(
    'E_CONFLICT',
    `--cursor continues an upstream page the upstream no longer serves (HTTP ${upstream?.status}: its page token expired or the list changed): run the same command without --cursor to start from the first page`,
    {
      details: {
        param: '--cursor',
        reason: 'cursor_expired',
        upstream,
        ...(error.details._untrusted ? { _untrusted: error.details._untrusted } : {}),
      },
      hint: 'drop --cursor (keep the other flags) and page again from the first page',
      cause: error,
    },
  )
}

function checked<T>(result: UpstreamPageResult<T>): { items: readonly T[]; next: string | undefined } {
  const next = (result as { next?: unknown } | null)?.next
  if (!Array.isArray(result?.items) || (next !== undefined && next !== null && typeof next !== 'string'))
    throw new AgentError(
      'E_INTERNAL',
      'upstreamPage(): fetchPage must return { items: an array, next: a string, null or undefined }',
    )
  return { items: result.items, next: next || undefined }
}

/**
 * One page of a list whose upstream paginates with its own cursor: exactly one upstream page is fetched, from the
 * position the verified `--cursor` carries. An upstream page larger than `limit` is cut, and the next cursor
 * carries the same upstream token with the items to skip; a smaller one is returned as it is (a page may hold
 * fewer than `limit` items: only `has_more` says the list ended).
 */
export async function fetchUpstreamPage<T>(
  options: UpstreamPageOptions<T> & { issuer: string; query: Record<string, unknown> },
): Promise<Page<T>> {
  const { limit, issuer, query } = options
  const at: UpstreamPosition = options.cursor
    ? decodeUpstreamCursor(options.cursor, issuer, query)
    : { token: undefined, skip: 0 }
  let fetched: UpstreamPageResult<T>
  try {
    fetched = await options.fetchPage({ token: at.token, limit })
  } catch (error) {
    throw stale(error, at)
  }
  const result = checked(fetched)
  const end = at.skip + limit
  const items = result.items.slice(at.skip, end)
  const position: UpstreamPosition | undefined =
    result.items.length > end
      ? { token: at.token, skip: end }
      : result.next === undefined
        ? undefined
        : { token: result.next, skip: 0 }
  const next = position ? encodeUpstreamCursor(position, issuer, query) : null
  return { items, count: items.length, next_cursor: next, has_more: next !== null }
}
