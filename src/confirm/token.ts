import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { canonicalJson } from './canonical.js'

/** What a confirm token is bound to (spec 002 §7, §9). */
export type Binding = {
  /** The command id (`tasks:delete`). */
  command: string
  /** Arguments and flags, without presentation and flow flags. */
  args: Record<string, unknown>
  /** Target resource ids. */
  targets: string[]
  /** Resource versions (etag / changekey / updated_at), keyed by id. */
  versions: Record<string, string | number | null>
  /** Account, profile and permission context. */
  principal: Record<string, unknown>
}

/** Why a token was refused. */
export type RejectReason =
  | 'tampered'
  | 'args_changed'
  | 'other_command'
  | 'target_changed'
  | 'state_drift'
  | 'expired'
  | 'already_used'
  | 'other_account'

/** The verified, decoded content of a token. */
export type TokenClaims = { id: string; command: string; issuedAt: number; expiresAt: number }

type Payload = {
  v: 1
  jti: string
  cmd: string
  iat: number
  exp: number
  d: { acct: string; args: string; tgt: string; ver: string }
}

const PREFIX = 'ct_1.'
const MAC_CONTEXT = 'agentcli-confirm-v1.'

function b64(buf: Buffer): string {
  return buf.toString('base64url')
}

/** A keyed digest of one part of the binding: the token reveals nothing about what it binds. */
function digest(secret: Buffer, part: string, value: unknown): string {
  return b64(
    createHmac('sha256', secret)
      .update(`${part}\0${canonicalJson(value)}`)
      .digest()
      .subarray(0, 18),
  )
}

function digests(secret: Buffer, b: Binding): Payload['d'] {
  return {
    acct: digest(secret, 'acct', b.principal),
    args: digest(secret, 'args', b.args),
    tgt: digest(secret, 'tgt', [...b.targets].sort()),
    ver: digest(secret, 'ver', b.versions),
  }
}

function mac(secret: Buffer, payload: string): Buffer {
  return createHmac('sha256', secret)
    .update(MAC_CONTEXT + payload)
    .digest()
}

/** Mint a token for a binding, valid for `ttlMs` from `now`. */
export function mintToken(
  secret: Buffer,
  binding: Binding,
  now: number,
  ttlMs: number,
): { token: string; claims: TokenClaims } {
  const payload: Payload = {
    v: 1,
    jti: b64(randomBytes(16)),
    cmd: binding.command,
    iat: now,
    exp: now + ttlMs,
    d: digests(secret, binding),
  }
  const encoded = b64(Buffer.from(JSON.stringify(payload)))
  return {
    token: `${PREFIX}${encoded}.${b64(mac(secret, encoded))}`,
    claims: { id: payload.jti, command: payload.cmd, issuedAt: payload.iat, expiresAt: payload.exp },
  }
}

/** Result of {@link verifyToken}. */
export type Verification = { ok: true; claims: TokenClaims } | { ok: false; reason: RejectReason; claims?: TokenClaims }

function decode(token: string): { encoded: string; given: Buffer; payload: Payload } | undefined {
  if (!token.startsWith(PREFIX)) return undefined
  const [encoded, sig, ...rest] = token.slice(PREFIX.length).split('.')
  if (!encoded || !sig || rest.length > 0 || !/^[A-Za-z0-9_-]+$/.test(encoded) || !/^[A-Za-z0-9_-]+$/.test(sig))
    return undefined
  try {
    const payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Payload
    return { encoded, given: Buffer.from(sig, 'base64url'), payload }
  } catch {
    return undefined
  }
}

/**
 * Check a token against the binding recomputed from the current call and state. The MAC is compared in
 * constant time before any claim is trusted; then, in order, the command, expiry, account, arguments, targets
 * and versions, so the reason names the first thing that moved.
 */
export function verifyToken(secret: Buffer, token: string, binding: Binding, now: number): Verification {
  const decoded = decode(token)
  if (!decoded) return { ok: false, reason: 'tampered' }
  const expected = mac(secret, decoded.encoded)
  if (decoded.given.length !== expected.length || !timingSafeEqual(decoded.given, expected))
    return { ok: false, reason: 'tampered' }
  const p = decoded.payload
  if (p.v !== 1 || typeof p.jti !== 'string' || typeof p.exp !== 'number' || typeof p.iat !== 'number' || !p.d)
    return { ok: false, reason: 'tampered' }
  const claims: TokenClaims = { id: p.jti, command: p.cmd, issuedAt: p.iat, expiresAt: p.exp }
  if (p.cmd !== binding.command) return { ok: false, reason: 'other_command', claims }
  if (now >= p.exp) return { ok: false, reason: 'expired', claims }
  const d = digests(secret, binding)
  if (p.d.acct !== d.acct) return { ok: false, reason: 'other_account', claims }
  if (p.d.args !== d.args) return { ok: false, reason: 'args_changed', claims }
  if (p.d.tgt !== d.tgt) return { ok: false, reason: 'target_changed', claims }
  if (p.d.ver !== d.ver) return { ok: false, reason: 'state_drift', claims }
  return { ok: true, claims }
}

/** The claims of a token whose MAC checks out, without checking the binding (for the single-use ledger). */
export function readClaims(secret: Buffer, token: string): TokenClaims | undefined {
  const decoded = decode(token)
  if (!decoded) return undefined
  const expected = mac(secret, decoded.encoded)
  if (decoded.given.length !== expected.length || !timingSafeEqual(decoded.given, expected)) return undefined
  return {
    id: decoded.payload.jti,
    command: decoded.payload.cmd,
    issuedAt: decoded.payload.iat,
    expiresAt: decoded.payload.exp,
  }
}
