import { canonicalJson } from './canonical.js'
import { osRandomBytes } from './os-random.js'
import { equalBytes, hmacSha256 } from './sha256.js'
import { type Drift, sortTargets, type Target, targetDrift } from './targets.js'

/**
 * What a confirm token is bound to before any state is read (spec 002 §7, §9). The token carries one keyed
 * digest of this whole object (canonical JSON), so a field added here is bound with no change of token format.
 */
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
  | 'policy_changed'
  | 'already_used'
  | 'target_changed'
  | 'state_drift'

/** The verified, decoded content of a token. */
export type TokenClaims = {
  id: string
  issuedAt: number
  expiresAt: number
  /** The targets and versions previewed, in clear when they fit in the token (to name a drift); else undefined. */
  targets: Target[] | undefined
  /** The keyed digest of the previewed targets and versions. */
  targetsDigest: string
}

/**
 * A token is `ct_3.<body>.<mac>`, both base64url. The body is binary, so a token stays short enough for an agent
 * to carry cheaply (at most {@link MAX_TOKEN_CHARS}) while binding as much as a longer one:
 *
 * | bytes | what |
 * | --- | --- |
 * | 1 + n | the length of the key id, then the id (n = 0: none) |
 * | 16 | the single-use nonce (`jti`) |
 * | 6 + 6 | issue time and expiry, ms since the epoch, unsigned big-endian |
 * | 4 × 3 | short keyed digests of the tool, the command, the principal and the policy: they only name why a token is refused |
 * | 18 | the keyed digest of the whole canonical {@link Binding} (what decides) |
 * | 18 | the keyed digest of the previewed targets and versions |
 * | rest | the previewed targets as JSON `[[id, version], …]` when they fit, else nothing |
 *
 * The binding digest covers every field of the binding object, so a field added to {@link Binding} is bound
 * without a change of format. The MAC (HMAC-SHA-256, full length) covers the whole body, key id included.
 */
const PREFIX = 'ct_3.'
const MAC_CONTEXT = 'agentcli-confirm-v3.'
/** The longest token minted: previewed targets in clear are left out (bound by digest only) when they would not fit. */
export const MAX_TOKEN_CHARS = 200
/** A token may claim an issue time this far ahead of the verifier's clock (two machines sharing a secret). */
export const FUTURE_SKEW_MS = 30_000

const NONCE = 16
const HINT = 3
const DIGEST = 18
/** Bytes after the key id: nonce, two times, four hints, two digests. */
const FIXED = NONCE + 6 + 6 + 4 * HINT + 2 * DIGEST
/** What a key id may hold (the key ring's own rule is narrower): printable ASCII, no space. */
const KEY_ID = /^[\x21-\x7e]*$/

type Pairs = Array<[string, string | number | null]>

type Body = {
  kid: string | null
  jti: Buffer
  iat: number
  exp: number
  hints: { tool: Buffer; cmd: Buffer; acct: Buffer; pol: Buffer }
  bind: Buffer
  tv: Buffer
  targets: Pairs | undefined
}

function b64(buf: Buffer): string {
  return buf.toString('base64url')
}

/** A keyed digest of one part of the binding, `length` bytes of it. */
function digest(secret: Buffer, part: string, value: unknown, length = DIGEST): Buffer {
  return hmacSha256(secret, `${part}\0${canonicalJson(value)}`).subarray(0, length)
}

/** The digest of everything the binding holds, whatever fields it has: the one value that decides. */
function bindingDigest(secret: Buffer, binding: Binding): Buffer {
  return digest(secret, 'bind', binding)
}

function sortedTargets(targets: readonly Target[]): Pairs {
  return sortTargets(targets).map((t) => [t.id, t.version])
}

function mac(secret: Buffer, encoded: string): string {
  return b64(hmacSha256(secret, MAC_CONTEXT + encoded))
}

function encode(body: Body): string {
  const kid = Buffer.from(body.kid ?? '', 'latin1')
  const times = Buffer.alloc(12)
  times.writeUIntBE(body.iat, 0, 6)
  times.writeUIntBE(body.exp, 6, 6)
  const parts = [
    Buffer.from([kid.length]),
    kid,
    body.jti,
    times,
    body.hints.tool,
    body.hints.cmd,
    body.hints.acct,
    body.hints.pol,
  ]
  parts.push(body.bind, body.tv)
  if (body.targets) parts.push(Buffer.from(JSON.stringify(body.targets), 'utf8'))
  return b64(Buffer.concat(parts))
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
  const body: Body = {
    kid: kid || null,
    jti: osRandomBytes(NONCE),
    iat: now,
    exp: now + ttlMs,
    hints: hintsOf(secret, binding),
    bind: bindingDigest(secret, binding),
    tv: digest(secret, 'tv', pairs),
    targets: pairs,
  }
  const sign = (b: Body) => {
    const encoded = encode(b)
    return `${PREFIX}${encoded}.${mac(secret, encoded)}`
  }
  let token = sign(body)
  // Many targets, or long ids: bound by digest only, so the token stays short (a drift is then not named).
  if (token.length > MAX_TOKEN_CHARS) {
    body.targets = undefined
    token = sign(body)
  }
  return { token, claims: claimsOf(body) }
}

function hintsOf(secret: Buffer, binding: Binding): Body['hints'] {
  return {
    tool: digest(secret, 'tool', binding.tool, HINT),
    cmd: digest(secret, 'cmd', binding.command, HINT),
    acct: digest(secret, 'acct', binding.principal, HINT),
    pol: digest(secret, 'pol', binding.policy ?? null, HINT),
  }
}

function claimsOf(b: Body): TokenClaims {
  return {
    id: b64(b.jti),
    issuedAt: b.iat,
    expiresAt: b.exp,
    targets: b.targets?.map(([id, version]) => ({ id, version })),
    targetsDigest: b64(b.tv),
  }
}

const B64URL = /^[A-Za-z0-9_-]+$/

/** Only the canonical spelling of base64url is accepted: the decoder ignores the low bits of a last character. */
function canonical64(text: string): Buffer | undefined {
  if (!B64URL.test(text)) return undefined
  const bytes = Buffer.from(text, 'base64url')
  return b64(bytes) === text ? bytes : undefined
}

/** The key id a body names: null for none, undefined when the body is too short to say. */
function keyIdOf(bytes: Buffer): string | null | undefined {
  const n = bytes[0]
  if (n === undefined || bytes.length < 1 + n) return undefined
  const kid = bytes.subarray(1, 1 + n).toString('latin1')
  if (!KEY_ID.test(kid)) return undefined
  return n === 0 ? null : kid
}

function isPairs(t: unknown): t is Pairs {
  return (
    Array.isArray(t) &&
    t.every(
      (x) =>
        Array.isArray(x) &&
        x.length === 2 &&
        typeof x[0] === 'string' &&
        (x[1] === null || typeof x[1] === 'string' || typeof x[1] === 'number'),
    )
  )
}

/** Decode a body whose MAC has been checked; undefined when its shape is not one this version writes. */
function decode(bytes: Buffer): Body | undefined {
  const kid = keyIdOf(bytes)
  if (kid === undefined) return undefined
  let at = 1 + (kid?.length ?? 0)
  if (bytes.length < at + FIXED) return undefined
  const take = (n: number) => {
    const part = bytes.subarray(at, at + n)
    at += n
    return part
  }
  const jti = take(NONCE)
  const iat = take(6).readUIntBE(0, 6)
  const exp = take(6).readUIntBE(0, 6)
  const hints = { tool: take(HINT), cmd: take(HINT), acct: take(HINT), pol: take(HINT) }
  const bind = take(DIGEST)
  const tv = take(DIGEST)
  let targets: Pairs | undefined
  if (at < bytes.length) {
    try {
      const parsed: unknown = JSON.parse(bytes.subarray(at).toString('utf8'))
      if (!isPairs(parsed)) return undefined
      targets = parsed
    } catch {
      return undefined
    }
  }
  return { kid, jti, iat, exp, hints, bind, tv, targets }
}

/** The body of a token this secret signed, or undefined: the MAC is checked before anything is trusted. */
function authentic(secret: Buffer, token: string): Body | undefined {
  if (!token.startsWith(PREFIX)) return undefined
  const [encoded, sig, ...rest] = token.slice(PREFIX.length).split('.')
  if (encoded === undefined || sig === undefined || rest.length > 0) return undefined
  const bytes = canonical64(encoded)
  if (!bytes || !canonical64(sig)) return undefined
  // Compare the canonical encodings in constant time: every changed character of the token is a refusal.
  const given = Buffer.from(sig)
  const expected = Buffer.from(mac(secret, encoded))
  if (given.length !== expected.length || !equalBytes(given, expected)) return undefined
  return decode(bytes)
}

/**
 * The key id a token names (null: none), read before its MAC is checked and only to pick the key that checks
 * it: the id is part of what that MAC covers. Undefined for a token that is not even well-formed.
 */
export function tokenKeyId(token: string): string | null | undefined {
  if (!token.startsWith(PREFIX)) return undefined
  // split() always yields a first part, empty for "ct_3.".
  const bytes = canonical64(token.slice(PREFIX.length).split('.')[0]!)
  return bytes ? keyIdOf(bytes) : undefined
}

function same(a: Buffer, b: Buffer): boolean {
  return equalBytes(a, b)
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
  const b = authentic(secret, token)
  if (!b) return { ok: false, reason: 'tampered' }
  const claims = claimsOf(b)
  const refuse = (reason: RejectReason): Verification => ({ ok: false, reason, claims })
  // The binding digest decides. It covers the tool, the command, the principal and the policy the hints are
  // digests of, so when it matches every hint does too: the hints (four HMACs) are computed only to name what
  // moved, which gives the same reason, in the same order, as checking them first.
  const bound = same(b.bind, bindingDigest(secret, binding))
  const hints = bound ? undefined : hintsOf(secret, binding)
  if (hints && !same(b.hints.tool, hints.tool)) return refuse('other_tool')
  if (hints && !same(b.hints.cmd, hints.cmd)) return refuse('other_command')
  if (b.iat > now + FUTURE_SKEW_MS || b.exp < b.iat) return refuse('not_yet_valid')
  if (now >= b.exp) return refuse('expired')
  // A hint that matches by chance still refuses: the binding digest did not.
  if (hints)
    return refuse(
      !same(b.hints.acct, hints.acct)
        ? 'other_account'
        : // A policy that appeared, went or changed since the dry-run: what was judged is not what would be applied.
          !same(b.hints.pol, hints.pol)
          ? 'policy_changed'
          : 'args_changed',
    )
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
  if (claims.targetsDigest === b64(digest(secret, 'tv', sortedTargets(now)))) return { ok: true }
  return claims.targets ? targetDrift(claims.targets, now) : { ok: false, reason: 'state_drift', drift: [] }
}
