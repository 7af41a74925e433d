import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { canonicalJson } from '../confirm/canonical.js'
import { validationError } from '../errors/agent-error.js'

/** The value a list is ordered by: a number, a string, or a tuple of them (compared element by element). */
export type SortKey = string | number | ReadonlyArray<string | number>

const PREFIX = 'c2.'
const DIGITS = /^\d+$/

function compareOne(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  const x = String(a)
  const y = String(b)
  // Ids like "2" and "10" are numbers written as strings: ordering them as text would put "10" first.
  if (DIGITS.test(x) && DIGITS.test(y) && x.length !== y.length) return x.length - y.length
  return x < y ? -1 : x > y ? 1 : 0
}

/** Total order of sort keys. */
export function compareKeys(a: SortKey, b: SortKey): number {
  const xs = Array.isArray(a) ? a : [a as string | number]
  const ys = Array.isArray(b) ? b : [b as string | number]
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
    const c = compareOne(xs[i]!, ys[i]!)
    if (c !== 0) return c
  }
  return xs.length - ys.length
}

/*
 * A cursor is not a secret and grants nothing (the next page runs under the caller's own rights); the MAC only
 * makes it tamper-evident, so an edited cursor, or one replayed under another query, is refused rather than
 * silently answering a different question. The key is public by design: the issuer (tool and command). The query
 * travels as a digest, so a cursor stays short (it is printed whole, never wrapped) however many filters there are.
 */
/** The MAC of a cursor's body; `label` separates the kinds of cursor, so one kind never verifies as another. */
export function cursorMac(issuer: string, body: string, label = 'agentcli-cursor'): Buffer {
  return createHmac('sha256', `${label}\0${issuer}`).update(body).digest().subarray(0, 12)
}

/**
 * Whether `tag` is `want` in base64url, compared in constant time. Compared as text, not decoded: base64 decoding
 * ignores a trailing partial character, so a decoded comparison would accept a cursor with characters appended.
 */
export function macMatches(tag: string, want: Buffer): boolean {
  const given = Buffer.from(tag)
  const expected = Buffer.from(want.toString('base64url'))
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The digest of a query a cursor carries (short: a cursor is printed whole). */
export function queryDigest(query: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(query)).digest().subarray(0, 9).toString('base64url')
}

/** The cursor that continues after `key` under `query`: `c2.<key>.<query digest>.<mac>`. */
export function encodeCursor(key: SortKey, issuer: string, query: Record<string, unknown>): string {
  const body = `${Buffer.from(JSON.stringify(key)).toString('base64url')}.${queryDigest(query)}`
  return `${PREFIX}${body}.${cursorMac(issuer, body).toString('base64url')}`
}

/** `E_VALIDATION` for a `--cursor` this command did not return as it is. */
export function invalidCursor(cursor: string) {
  return validationError(
    '--cursor is not a cursor this command returned (edited, cut short, or from another command); pass data.next_cursor exactly as printed, or drop --cursor to start from the first page',
    'a next_cursor from a previous page of this command',
    cursor,
    { param: '--cursor', reason: 'cursor_invalid' },
  )
}

function asFlags(query: Record<string, unknown>): string {
  const args = query._args && typeof query._args === 'object' ? Object.values(query._args).flat().map(String) : []
  const words = Object.entries(query)
    .filter(([k, v]) => v !== undefined && v !== false && !k.startsWith('_'))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => (v === true ? `--${k}` : `--${k} ${Array.isArray(v) ? v.join(' ') : String(v)}`))
  const all = [...args, ...words]
  return all.length > 0 ? all.join(' ') : 'no filters'
}

function isKey(value: unknown): value is SortKey {
  const one = (v: unknown) => typeof v === 'string' || typeof v === 'number'
  return one(value) || (Array.isArray(value) && value.length > 0 && value.every(one))
}

/** The key a cursor continues after; `E_VALIDATION` when it was tampered with or made by another query. */
export function decodeCursor(cursor: string, issuer: string, query: Record<string, unknown>): SortKey {
  if (!cursor.startsWith(PREFIX)) throw invalidCursor(cursor)
  const parts = cursor.slice(PREFIX.length).split('.')
  if (parts.length !== 3 || parts.some((p) => p.length === 0)) throw invalidCursor(cursor)
  const [key, digest, tag] = parts as [string, string, string]
  if (!macMatches(tag, cursorMac(issuer, `${key}.${digest}`))) throw invalidCursor(cursor)
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(key, 'base64url').toString('utf8'))
  } catch {
    throw invalidCursor(cursor)
  }
  if (!isKey(parsed)) throw invalidCursor(cursor)
  checkQuery(digest, query)
  return parsed
}

/** `E_VALIDATION` naming the flags to repeat when a cursor's query digest is not this call's. */
export function checkQuery(digest: string, query: Record<string, unknown>): void {
  if (digest !== queryDigest(query)) {
    throw validationError(
      `--cursor was made by another query (other arguments, filters, sort or --limit than this call's: ${asFlags(query)}): repeat exactly the flags of the call that returned the cursor, with --cursor, or drop --cursor to start this query from its first page`,
      'the arguments and flags of the call that returned this cursor',
      query,
      { param: '--cursor', reason: 'cursor_query_mismatch' },
    )
  }
}
