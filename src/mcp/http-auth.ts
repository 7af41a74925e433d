import { constants, createHash, createPublicKey, type KeyObject, timingSafeEqual, verify } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { AgentError } from '../errors/agent-error.js'
import type { HttpAuth } from './http.js'

/** What a verified bearer token says about its holder. */
export type Verified = { subject: string; issuer: string; expiresAt: number; scopes: string[] }

/** The issuer name of subjects from a local token list. */
export const LOCAL_ISSUER = 'local'

/** Seconds of clock difference tolerated on `exp` and `nbf`. */
const SKEW_SECONDS = 60

/**
 * Bearer tokens from a local file, for small setups: one `sha256:<hex of the token's SHA-256> <subject>` a line
 * (`#` starts a comment), so the file holds no token itself. The file must not be writable by other users (whoever
 * can add a line can let anyone in). A presented token is hashed and compared in constant time with every line.
 */
export function tokenListAuth(path: string, now: () => number = Date.now): HttpAuth {
  const entries = readTokenList(path)
  return {
    authorizationServers: [],
    verify: async (token) => {
      const got = createHash('sha256').update(token).digest()
      let subject: string | undefined
      for (const entry of entries) if (timingSafeEqual(entry.hash, got)) subject ??= entry.subject
      if (subject === undefined) throw new Error('unknown token')
      // The SDK refuses a token without an expiry: a listed token is valid for as long as it is listed.
      return { subject, issuer: LOCAL_ISSUER, expiresAt: Math.floor(now() / 1000) + 300, scopes: [] }
    },
  }
}

function readTokenList(path: string): Array<{ hash: Buffer; subject: string }> {
  let text: string
  try {
    if ((statSync(path).mode & 0o022) !== 0)
      throw new AgentError('E_CONFIG', `the token list ${path} is writable by other users`, {
        details: { path, fix: `chmod go-w ${path}` },
      })
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if (error instanceof AgentError) throw error
    throw new AgentError('E_CONFIG', `cannot read the token list ${path}: ${(error as Error).message}`, {
      details: { path },
    })
  }
  const entries: Array<{ hash: Buffer; subject: string }> = []
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const m = /^sha256:([0-9a-f]{64})\s+(\S{1,200})$/.exec(line)
    if (!m)
      throw new AgentError('E_CONFIG', `line ${i + 1} of the token list ${path} is not "sha256:<hex> <subject>"`, {
        details: { path, line: i + 1 },
      })
    entries.push({ hash: Buffer.from(m[1]!, 'hex'), subject: m[2]! })
  }
  if (entries.length === 0)
    throw new AgentError('E_CONFIG', `the token list ${path} lists no token`, { details: { path } })
  return entries
}

type Jwk = { kty?: string; kid?: string; use?: string; alg?: string; crv?: string; [key: string]: unknown }

/** Signature algorithms accepted, with the key type each needs. Symmetric ones and `none` are never accepted. */
const ALGS: Record<string, { kty: string; hash: string | null; pss?: boolean; crv?: string }> = {
  RS256: { kty: 'RSA', hash: 'sha256' },
  RS384: { kty: 'RSA', hash: 'sha384' },
  RS512: { kty: 'RSA', hash: 'sha512' },
  PS256: { kty: 'RSA', hash: 'sha256', pss: true },
  PS384: { kty: 'RSA', hash: 'sha384', pss: true },
  PS512: { kty: 'RSA', hash: 'sha512', pss: true },
  ES256: { kty: 'EC', hash: 'sha256', crv: 'P-256' },
  ES384: { kty: 'EC', hash: 'sha384', crv: 'P-384' },
  ES512: { kty: 'EC', hash: 'sha512', crv: 'P-521' },
  EdDSA: { kty: 'OKP', hash: null },
}

/** Options of {@link issuerAuth}. */
export type IssuerOptions = {
  /** The authorization server's issuer identifier (exactly the tokens' `iss`). */
  issuer: string
  /** The audience tokens must name in `aud` (this server's resource URL). */
  audience: string
  /** Where the issuer's keys are; default: its RFC 8414 (or OpenID) metadata's `jwks_uri`. */
  jwksUri?: string
  now?: () => number
  fetch?: typeof fetch
}

/** The least time between two fetches of an issuer's keys that succeeded (a token naming an unknown kid refetches). */
export const KEYS_REFRESH_MS = 30_000
/** The least time after a failed fetch of the keys before the next: the issuer is not asked once per request. */
export const KEYS_RETRY_MS = 5_000

/**
 * JWT access tokens signed by a configured issuer, checked against its published keys (JWKS): the signature with
 * an asymmetric algorithm the key is for, `iss` exactly the issuer, `aud` naming this server, `exp` in the future
 * and `nbf` (when present) in the past, with {@link SKEW_SECONDS} of tolerance, and a `sub`. The keys are fetched
 * on first use and again (at most every 30 s) when a token names a key not seen yet. The issuer and its keys must
 * be https unless on loopback.
 */
export function issuerAuth(options: IssuerOptions): HttpAuth {
  const issuer = options.issuer
  checkUrl(issuer, 'the issuer')
  const now = options.now ?? Date.now
  const get = options.fetch ?? fetch
  let keys: Jwk[] | undefined
  let fetchedAt = Number.NEGATIVE_INFINITY
  let loading: Promise<Jwk[]> | undefined
  let failed: Error | undefined
  const fetchKeys = async (): Promise<Jwk[]> => {
    const uri = options.jwksUri ?? (await discoverJwks(issuer, get))
    checkUrl(uri, 'the JWKS URI')
    const body = (await fetchJson(get, uri)) as { keys?: unknown }
    if (!Array.isArray(body.keys)) throw new Error(`${uri} holds no "keys"`)
    return body.keys as Jwk[]
  }
  // The keys are fetched by callers' requests, so without a bound a burst of tokens (before the first fetch ends,
  // or naming kids nobody published) or an issuer that is down would turn each request into a fetch to the issuer:
  // one fetch at a time, shared; after one, none for KEYS_REFRESH_MS, after a failure none for KEYS_RETRY_MS, and
  // meanwhile the keys already known answer (none yet: every token is refused, with the fetch's error).
  const load = (): Promise<Jwk[]> => {
    if (loading) return loading
    const wait = failed ? KEYS_RETRY_MS : KEYS_REFRESH_MS
    if (now() - fetchedAt < wait) return keys ? Promise.resolve(keys) : Promise.reject(failed)
    // Counted from when the fetch ended (the fetch in flight answers meanwhile): one that took its whole timeout to
    // fail is not retried at once.
    const settled = () => {
      loading = undefined
      fetchedAt = now()
    }
    loading = fetchKeys().then(
      (got) => {
        settled()
        keys = got
        failed = undefined
        return got
      },
      (error: unknown) => {
        settled()
        failed = error instanceof Error ? error : new Error(String(error))
        throw failed
      },
    )
    return loading
  }
  const keyFor = async (kid: string | undefined, alg: string): Promise<KeyObject> => {
    const pick = (set: Jwk[]) =>
      set.filter(
        (k) =>
          (kid === undefined || k.kid === kid) &&
          (k.use === undefined || k.use === 'sig') &&
          (k.alg === undefined || k.alg === alg),
      )
    let found = pick(keys ?? (await load()))
    if (found.length === 0) found = pick(await load())
    if (found.length !== 1) throw new Error(found.length ? 'the token names no single key' : 'no key for the token')
    return createPublicKey({ key: found[0] as never, format: 'jwk' })
  }
  return {
    authorizationServers: [issuer],
    verify: async (token) => {
      const parts = token.split('.')
      if (parts.length !== 3) throw new Error('not a JWT')
      const header = decode(parts[0]!) as { alg?: unknown; kid?: unknown; crit?: unknown }
      const claims = decode(parts[1]!) as Record<string, unknown>
      const alg = typeof header.alg === 'string' ? ALGS[header.alg] : undefined
      if (!alg || !Object.hasOwn(ALGS, header.alg as string)) throw new Error('unsupported algorithm')
      if (header.crit !== undefined) throw new Error('unsupported critical header')
      const key = await keyFor(typeof header.kid === 'string' ? header.kid : undefined, header.alg as string)
      const jwk = key.export({ format: 'jwk' }) as Jwk
      if (jwk.kty !== alg.kty || (alg.crv && jwk.crv !== alg.crv)) throw new Error('the key does not fit the algorithm')
      const data = Buffer.from(`${parts[0]}.${parts[1]}`)
      const signature = Buffer.from(parts[2]!, 'base64url')
      const good = alg.pss
        ? verify(
            alg.hash,
            data,
            { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
            signature,
          )
        : alg.kty === 'EC'
          ? verify(alg.hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature)
          : verify(alg.hash, data, key, signature)
      if (!good) throw new Error('bad signature')
      const seconds = now() / 1000
      if (claims.iss !== issuer) throw new Error('wrong issuer')
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
      if (!aud.some((a) => typeof a === 'string' && sameResource(a, options.audience)))
        throw new Error('not for this server')
      if (typeof claims.exp !== 'number' || claims.exp + SKEW_SECONDS <= seconds) throw new Error('expired')
      if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf - SKEW_SECONDS > seconds))
        throw new Error('not valid yet')
      if (typeof claims.sub !== 'string' || claims.sub === '') throw new Error('no subject')
      const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : []
      return { subject: claims.sub, issuer, expiresAt: claims.exp, scopes }
    },
  }
}

function decode(part: string): unknown {
  const value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JWT')
  return value
}

function sameResource(a: string, b: string): boolean {
  const norm = (s: string) => s.replace(/#.*$/, '').replace(/\/$/, '')
  return norm(a) === norm(b)
}

function checkUrl(value: string, what: string): void {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new AgentError('E_CONFIG', `${what} is not a URL: ${value}`, { details: { got: value } })
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new AgentError('E_CONFIG', `${what} must be https (or http on loopback): ${value}`, {
      details: { got: value },
    })
}

async function discoverJwks(issuer: string, get: typeof fetch): Promise<string> {
  const base = issuer.replace(/\/$/, '')
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    const meta = (await fetchJson(get, `${base}${path}`).catch(() => undefined)) as
      | { issuer?: unknown; jwks_uri?: unknown }
      | undefined
    // RFC 8414 §3.3: the document must name the issuer it was fetched for.
    if (meta && meta.issuer === issuer && typeof meta.jwks_uri === 'string') return meta.jwks_uri
  }
  throw new Error(`no metadata naming jwks_uri at ${issuer}`)
}

async function fetchJson(get: typeof fetch, url: string): Promise<unknown> {
  const res = await get(url, { redirect: 'error', signal: AbortSignal.timeout(10_000) })
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`)
  return res.json()
}
