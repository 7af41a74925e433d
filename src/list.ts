import type { Interfaces } from '@oclif/core'
import { validationError } from './errors/agent-error.js'
import { Flags } from './flags.js'

/** A page of a list (spec 002 §8). */
export type Page<T> = { items: T[]; count: number; next_cursor: string | null; has_more: boolean }

/** Bounds of a list command's `--limit`: never unbounded. */
export type PaginationOptions = { defaultLimit?: number; maxLimit?: number }

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
    cursor: Flags.string({ description: 'Continue after the page that returned this next_cursor.' }),
  }
}

const CURSOR_PREFIX = 'c1.'

function encodeCursor(offset: number): string {
  return CURSOR_PREFIX + Buffer.from(JSON.stringify({ o: offset })).toString('base64url')
}

function decodeCursor(cursor: string): number {
  try {
    if (!cursor.startsWith(CURSOR_PREFIX)) throw new Error('prefix')
    const { o } = JSON.parse(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8')) as {
      o: unknown
    }
    if (typeof o === 'number' && Number.isSafeInteger(o) && o >= 0) return o
  } catch {}
  throw validationError(
    '--cursor is not a cursor this command returned',
    'a next_cursor from a previous page',
    cursor,
    { param: '--cursor' },
  )
}

/** The result of {@link paginate}: the page, and how much was left out (for `meta.truncation_hint`). */
export type Paginated<T> = { page: Page<T>; remaining: number }

/** Cut one page out of an already ordered list. */
export function paginate<T>(all: readonly T[], options: { limit: number; cursor?: string | undefined }): Paginated<T> {
  const offset = options.cursor ? decodeCursor(options.cursor) : 0
  const items = all.slice(offset, offset + options.limit)
  const end = offset + items.length
  const hasMore = end < all.length
  return {
    page: { items, count: items.length, next_cursor: hasMore ? encodeCursor(end) : null, has_more: hasMore },
    remaining: all.length - end,
  }
}
