import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { canonicalJson } from '../confirm/canonical.js'
import type { KeyRing } from '../confirm/secret.js'
import type { PreparedRequest } from './request.js'

/** How an elicitation approval starts, among the signatures filed for a request. */
export const ELICITATION_PREFIX = 'mcp-elicitation.1.'
/** The approver id's prefix: `mcp-elicitation:<client or subject>`, as the audit records it. */
export const ELICITATION_APPROVER = 'mcp-elicitation:'
/** How long a person's answer counts (and never past the request's own expiry): it is used at once, by the server. */
export const ELICITATION_TTL_MS = 5 * 60_000

// Its own context: a key of the confirm ring MACs tokens too, and an approval must never verify as anything else.
const MAC_CONTEXT = 'agentcli-mcp-elicitation-v1'

/**
 * A person's yes, given in the MCP host's form, to exactly one approval request. It carries no signature of that
 * person (a form has none); it is MAC'd with the confirm key ring, so only a process that holds the tool's confirm
 * secret (the `tool mcp` server, on the person's answer) can file one, and the approval store stays trusted with
 * nothing.
 */
type Claims = {
  /** The request id and the SHA-256 of its exact bytes: the approval is good for that change alone. */
  request: string
  digest: string
  /** `mcp-elicitation:<who>`: the client, or the authenticated subject, whose host asked the person. */
  approver: string
  /** When the person answered and when the answer stops counting, ms since the epoch. */
  at: number
  expires: number
  /** The id of the confirm key that MACs it (null: a single key without an id). */
  kid: string | null
}

/** Why a filed elicitation approval does not count. */
export type ElicitationReject = 'not_an_approval' | 'unknown_key' | 'bad_mac' | 'other_request' | 'expired'

const macOf = (key: Buffer, body: string) =>
  createHmac('sha256', createHmac('sha256', key).update(MAC_CONTEXT).digest()).update(body).digest()

const digestOf = (request: PreparedRequest) => createHash('sha256').update(request.bytes).digest('hex')

/**
 * The approval to file for `request` once a person accepted it at the host: bound to the request's exact bytes,
 * expiring after {@link ELICITATION_TTL_MS} or with the request, whichever is first.
 */
export function mintElicitation(ring: KeyRing, request: PreparedRequest, who: string, now: number): string {
  const claims: Claims = {
    request: request.id,
    digest: digestOf(request),
    approver: ELICITATION_APPROVER + who,
    at: now,
    expires: Math.min(now + ELICITATION_TTL_MS, Date.parse(request.request.expires_at)),
    kid: ring.current.id,
  }
  const body = Buffer.from(canonicalJson(claims)).toString('base64url')
  return `${ELICITATION_PREFIX}${body}.${macOf(ring.current.key, body).toString('base64url')}`
}

/** Whether a filed string is an elicitation approval (else it is judged as an SSH signature). */
export function isElicitation(filed: string): boolean {
  return filed.startsWith(ELICITATION_PREFIX)
}

/**
 * Verify a filed elicitation approval against the request recomputed at `--confirm`: MAC'd by a key of the ring,
 * for these very bytes, not expired. Returns the approver, or why it does not count.
 */
export function verifyElicitation(
  filed: string,
  request: PreparedRequest,
  keys: ReadonlyMap<string | null, Buffer>,
  now: number,
): { approver: string } | { reason: ElicitationReject } {
  const [body, mac, extra] = filed.slice(ELICITATION_PREFIX.length).split('.')
  let claims: Claims
  try {
    claims = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Claims
  } catch {
    return { reason: 'not_an_approval' }
  }
  if (extra !== undefined || !mac || typeof claims !== 'object' || claims === null) return { reason: 'not_an_approval' }
  const key = keys.get(claims.kid ?? null)
  if (!key) return { reason: 'unknown_key' }
  const want = macOf(key, body!)
  const got = Buffer.from(mac, 'base64url')
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { reason: 'bad_mac' }
  if (claims.request !== request.id || claims.digest !== digestOf(request)) return { reason: 'other_request' }
  if (!(now < claims.expires) || now < claims.at - 30_000) return { reason: 'expired' }
  return { approver: claims.approver }
}
