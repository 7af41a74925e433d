import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { canonicalJson } from './canonical.js'
import { type Drift, sortTargets, type Target, targetDrift } from './targets.js'

/** What a confirm token is bound to before any state is read (spec 002 §7, §9). */
export type Binding = {
  /** The tool's identity (bin name and package name): one tool's token never verifies for another. */
  tool: string
  /** The command id (`tasks:delete`). */
  command: string
  /** Arguments and flags, without presentation and flow flags. */
  args: Record<string, unknown>
  /** The acting account, profile and permission context (see `WriteCommand.principal`). */
  principal: Record<string, unknown>
  /** The digest of the effective policy the call was judged by (`src/policy/`); absent when there is none. */
  policy?: string
}

/** Why a token was refused. */
export type RejectReason =
  | 'tampered'
  | 'unknown_key'
  | 'other_tool'
  | 'other_command'
  | 'not_yet_valid'
  | 'expired'
  | 'other_account'
  | 'args_changed'
  | 'already_used'
  | 'target_changed'
  | 'state_drift'
  | 'policy_changed'

/** The verified, decoded content of a token. */
export type TokenClaims = {
  id: string
  command: string
  issuedAt: number
  expiresAt: number
  /** The targets and versions previewed, in clear when there were few of them (to name a drift); else undefined. */
  targets: Target[] | undefined
  /** The keyed digest of the previewed targets and versions. */
  targetsDigest: string
}

type Payload = {
  v: 2
  /** The id of the key that signed it, when the secret is a rotating key ring. */
  kid?: string
  jti: string
  cmd: string
  iat: number
  exp: number
  /** Keyed digests: the token reveals nothing about the tool, account or arguments it binds. */
  d: { tool: string; acct: string; args: string; tv: string; pol?: string }
  /** The previewed targets in clear, up to {@link CLEAR_TARGETS} of them. */
  t?: Array<[string, string | number | null]>
}

const PREFIX = 'ct_2.'
const MAC_CONTEXT = 'agentcli-confirm-v2.'
/** More targets than this are bound by digest only, so a token stays short enough for a command line. */
export const CLEAR_TARGETS = 32
/** A token may claim an issue time this far ahead of the verifier's clock (two machines sharing a secret). */
export const FUTURE_SKEW_MS = 30_000

function b64(buf: Buffer): string {
  return buf.toString('base64url')
}

/** A keyed digest of one part of the binding. */
function digest(secret: Buffer, part: string, value: unknown): string {
  return b64(
    createHmac('sha256', secret)
      .update(`${part}\0${canonicalJson(value)}`)
      .digest()
      .subarray(0, 18),
  )
}

function sortedTargets(targets: readonly Target[]): Array<[string, string | number | null]> {
  return sortTargets(targets).map((t) => [t.id, t.version])
}

function mac(secret: Buffer, payload: string): string {
  return b64(
    createHmac('sha256', secret)
      .update(MAC_CONTEXT + payload)
      .digest(),
  )
}

/** Mint a token for a binding and the previewed targets, valid for `ttlMs` from `now`. */
export function mintToken(
  secret: Buffer,
  binding: Binding,
  targets: readonly Target[],
  now: number,
  ttlMs: number,
  kid?: string | null,
): { token: string; claims: TokenClaims } {
  const pairs = sortedTargets(targets)
  const payload: Payload = {
    v: 2,
    ...(kid ? { kid } : {}),
    jti: b64(randomBytes(16)),
    cmd: binding.command,
    iat: now,
    exp: now + ttlMs,
    d: {
      tool: digest(secret, 'tool', binding.tool),
      acct: digest(secret, 'acct', binding.principal),
      args: digest(secret, 'args', binding.args),
      tv: digest(secret, 'tv', pairs),
      ...(binding.policy !== undefined ? { pol: digest(secret, 'pol', binding.policy) } : {}),
    },
    ...(pairs.length <= CLEAR_TARGETS ? { t: pairs } : {}),
  }
  const encoded = b64(Buffer.from(JSON.stringify(payload)))
  return { token: `${PREFIX}${encoded}.${mac(secret, encoded)}`, claims: claimsOf(payload) }
}

function claimsOf(p: Payload): TokenClaims {
  return {
    id: p.jti,
    command: p.cmd,
    issuedAt: p.iat,
    expiresAt: p.exp,
    targets: p.t?.map(([id, version]) => ({ id, version })),
    targetsDigest: p.d.tv,
  }
}

const B64URL = /^[A-Za-z0-9_-]+$/

/** Only the canonical spelling of base64url is accepted: the decoder ignores the low bits of a last character. */
function canonical64(text: string): Buffer | undefined {
  if (!B64URL.test(text)) return undefined
  const bytes = Buffer.from(text, 'base64url')
  return b64(bytes) === text ? bytes : undefined
}

function isPayload(p: Payload): boolean {
  const d = p.d
  return (
    p.v === 2 &&
    (p.kid === undefined || typeof p.kid === 'string') &&
    typeof p.jti === 'string' &&
    typeof p.cmd === 'string' &&
    Number.isSafeInteger(p.iat) &&
    Number.isSafeInteger(p.exp) &&
    typeof d === 'object' &&
    d !== null &&
    [d.tool, d.acct, d.args, d.tv].every((x) => typeof x === 'string') &&
    (d.pol === undefined || typeof d.pol === 'string') &&
    (p.t === undefined ||
      (Array.isArray(p.t) &&
        p.t.every(
          (x) =>
            Array.isArray(x) &&
            x.length === 2 &&
            typeof x[0] === 'string' &&
            (x[1] === null || typeof x[1] === 'string' || typeof x[1] === 'number'),
        )))
  )
}

/** The payload of a token this secret signed, or undefined: the MAC is checked before anything is trusted. */
function authentic(secret: Buffer, token: string): Payload | undefined {
  if (!token.startsWith(PREFIX)) return undefined
  const [encoded, sig, ...rest] = token.slice(PREFIX.length).split('.')
  if (encoded === undefined || sig === undefined || rest.length > 0) return undefined
  const bytes = canonical64(encoded)
  if (!bytes || !canonical64(sig)) return undefined
  // Compare the canonical encodings in constant time: every changed character of the token is a refusal.
  const given = Buffer.from(sig)
  const expected = Buffer.from(mac(secret, encoded))
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  try {
    const payload = JSON.parse(bytes.toString('utf8')) as Payload
    return typeof payload === 'object' && payload !== null && isPayload(payload) ? payload : undefined
  } catch {
    return undefined
  }
}

/**
 * The key id a token names (null: none), read before its MAC is checked and only to pick the key that checks
 * it: the id is part of what that MAC covers. Undefined for a token that is not even well-formed.
 */
export function tokenKeyId(token: string): string | null | undefined {
  if (!token.startsWith(PREFIX)) return undefined
  // split() always yields a first part, empty for "ct_2.".
  const bytes = canonical64(token.slice(PREFIX.length).split('.')[0]!)
  if (!bytes) return undefined
  try {
    const kid = (JSON.parse(bytes.toString('utf8')) as { kid?: unknown } | null)?.kid
    return typeof kid === 'string' ? kid : null
  } catch {
    return undefined
  }
}

/** Result of {@link verifyToken}. */
export type Verification = { ok: true; claims: TokenClaims } | { ok: false; reason: RejectReason; claims?: TokenClaims }

/**
 * Check a token against the binding of the current call, before any state is read. The MAC first (constant
 * time, canonical encoding), then in order the tool, the command, the issue time, the expiry, the account and
 * the arguments, so the reason names the first thing that moved. Targets and versions are checked after the
 * plan, with {@link verifyTargets}.
 */
export function verifyToken(secret: Buffer, token: string, binding: Binding, now: number): Verification {
  const p = authentic(secret, token)
  if (!p) return { ok: false, reason: 'tampered' }
  const claims = claimsOf(p)
  const refuse = (reason: RejectReason): Verification => ({ ok: false, reason, claims })
  if (p.d.tool !== digest(secret, 'tool', binding.tool)) return refuse('other_tool')
  if (p.cmd !== binding.command) return refuse('other_command')
  if (p.iat > now + FUTURE_SKEW_MS || p.exp < p.iat) return refuse('not_yet_valid')
  if (now >= p.exp) return refuse('expired')
  if (p.d.acct !== digest(secret, 'acct', binding.principal)) return refuse('other_account')
  if (p.d.args !== digest(secret, 'args', binding.args)) return refuse('args_changed')
  // A policy that appeared, went or changed since the dry-run: what was judged is not what would be applied.
  const pol = binding.policy !== undefined ? digest(secret, 'pol', binding.policy) : undefined
  if (p.d.pol !== pol) return refuse('policy_changed')
  return { ok: true, claims }
}

/** Result of {@link verifyTargets}. */
export type TargetCheck = { ok: true } | { ok: false; reason: 'target_changed' | 'state_drift'; drift: Drift[] }

/**
 * Compare the targets of the plan recomputed at confirm with those a verified token bound. A target that is gone
 * or whose version moved is `state_drift`; a target the preview did not have is `target_changed`. With the
 * targets in clear the drift names each one with its versions then and now.
 */
export function verifyTargets(secret: Buffer, claims: TokenClaims, now: readonly Target[]): TargetCheck {
  if (claims.targetsDigest === digest(secret, 'tv', sortedTargets(now))) return { ok: true }
  return claims.targets ? targetDrift(claims.targets, now) : { ok: false, reason: 'state_drift', drift: [] }
}
