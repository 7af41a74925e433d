import { AgentError, validationError } from '../errors/agent-error.js'
import { checkQuery, cursorMac, invalidCursor, macMatches, queryDigest } from './cursor.js'

/** Where a list over an upstream continues: the upstream's page token (none: its first page) and items to skip. */
export type UpstreamPosition = { token: string | undefined; skip: number }

const PREFIX = 'u1.'
/** Its own MAC label: a keyset cursor (`c2.`) never verifies as an upstream one, nor the reverse. */
const LABEL = 'agentcli-upstream-cursor'
/** The largest upstream page token a cursor carries, in UTF-8 bytes (AWS and Google tokens stay well under it). */
export const MAX_UPSTREAM_TOKEN_BYTES = 2048
/**
 * The longest `--cursor` read, checked before any decoding: a token of the largest size, base64url, plus the
 * skip, digest and MAC fit under it, so every cursor minted here is accepted and nothing longer is worked on.
 */
export const MAX_UPSTREAM_CURSOR_CHARS = 4096
/** A skip is at most a page: no upstream page holds a million items, and the digits stay bounded. */
const SKIP = /^(0|[1-9]\d{0,5})$/

/**
 * The cursor that continues at `position` under `query`: `u1.<skip>.<token, base64url>.<query digest>.<mac>`. The
 * token travels as it is (base64url, not encrypted): it is the upstream's own, fetched under the caller's
 * credential, and grants nothing; the MAC makes the whole tamper-evident and binds it to the issuer and query.
 */
export function encodeUpstreamCursor(
  position: UpstreamPosition,
  issuer: string,
  query: Record<string, unknown>,
): string {
  const token = position.token === undefined ? '' : Buffer.from(position.token, 'utf8').toString('base64url')
  const bytes = position.token === undefined ? 0 : Buffer.byteLength(position.token, 'utf8')
  if (bytes > MAX_UPSTREAM_TOKEN_BYTES)
    throw new AgentError(
      'E_INTERNAL',
      `the upstream's page token is ${bytes} bytes; a cursor carries at most ${MAX_UPSTREAM_TOKEN_BYTES}: carry a shorter position (e.g. the last item's id) instead`,
      { details: { token_bytes: bytes, max_token_bytes: MAX_UPSTREAM_TOKEN_BYTES } },
    )
  const body = `${position.skip}.${token}.${queryDigest(query)}`
  return `${PREFIX}${body}.${cursorMac(issuer, body, LABEL).toString('base64url')}`
}

/**
 * The position a cursor continues at. `E_VALIDATION` (`details.param: "--cursor"`) when it is too long
 * (`cursor_too_large`, checked first), was edited, cut short or made by another tool or command
 * (`cursor_invalid`), or by another query (`cursor_query_mismatch`).
 */
export function decodeUpstreamCursor(cursor: string, issuer: string, query: Record<string, unknown>): UpstreamPosition {
  if (cursor.length > MAX_UPSTREAM_CURSOR_CHARS)
    throw validationError(
      `--cursor is ${cursor.length} characters, longer than any cursor this command returns (at most ${MAX_UPSTREAM_CURSOR_CHARS}); pass data.next_cursor exactly as printed, or drop --cursor to start from the first page`,
      `a next_cursor of at most ${MAX_UPSTREAM_CURSOR_CHARS} characters`,
      `${cursor.length} characters`,
      { param: '--cursor', reason: 'cursor_too_large' },
    )
  if (!cursor.startsWith(PREFIX)) throw invalidCursor(cursor)
  const parts = cursor.slice(PREFIX.length).split('.')
  if (parts.length !== 4) throw invalidCursor(cursor)
  const [skip, token, digest, tag] = parts as [string, string, string, string]
  if (
    !SKIP.test(skip) ||
    digest.length === 0 ||
    !macMatches(tag, cursorMac(issuer, `${skip}.${token}.${digest}`, LABEL))
  )
    throw invalidCursor(cursor)
  checkQuery(digest, query)
  return { token: token === '' ? undefined : Buffer.from(token, 'base64url').toString('utf8'), skip: Number(skip) }
}
