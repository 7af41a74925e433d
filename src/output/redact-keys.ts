/**
 * Which keys name a secret. A key is judged in any style (`accessToken`, `refresh-token`, `X-Api-Key`,
 * `DB_PASSWORD`): it is normalised to snake_case words first, then matched on its last words.
 */

/** Names whose whole value is a secret, whatever its shape (string, number, object, array). */
const SECRET_NAMES = [
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'pwd',
  'secret',
  'secrets',
  'token',
  'authorization',
  'cookie',
  'cookies',
  'api_key',
  'apikey',
  'access_key',
  'secret_access_key',
  'private_key',
  'signing_key',
  'encryption_key',
  'session',
  'session_id',
  'sessionid',
  'jwt',
  'device_code',
  'auth_code',
  'authorization_code',
]

/** Names of containers: a string under them is a secret, an object is searched (`credentials: {configured}`). */
const CONTAINER_NAMES = ['credential', 'credentials']

/** Keys that look sensitive but are the contract's own output (a confirm token is a capability the agent needs). */
const ALLOWED_KEYS = new Set(['confirm_token', 'token_id', 'tokens'])

/** What a sensitive key hides. */
export type KeyVerdict = 'plain' | 'secret' | 'container'

const extraKeys = new Set<string>()
/** Verdicts by raw key: a reference document repeats a few dozen keys thousands of times. */
const verdicts = new Map<string, KeyVerdict>()
let fragmentCache: string[] | undefined

/** `accessToken`, `Access-Token`, `ACCESS_TOKEN`, `access_token2` → `access_token`. */
export function normalizeKey(key: string): string {
  // ASCII only: a non-ASCII letter whose lower case is ASCII (the Kelvin sign) would match a name the
  // prefilter's literal words cannot see.
  return key
    .replace(/[^\x00-\x7f]/g, '_')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .replace(/_?\d+$/, '')
}

function matches(k: string, names: Iterable<string>): boolean {
  for (const n of names) if (k === n || k.endsWith(`_${n}`)) return true
  return false
}

/** Add tool-declared sensitive key names (matched like the built-in ones, whole value hidden). */
export function addSensitiveKeys(keys: Iterable<string>): void {
  const before = extraKeys.size
  for (const key of keys) {
    const k = normalizeKey(key)
    if (k) extraKeys.add(k)
  }
  // Verdicts and fragments depend on the set alone: a run declaring the keys already known keeps them.
  if (extraKeys.size === before) return
  verdicts.clear()
  fragmentCache = undefined
}

/** Forget the tool-declared keys: each in-process run declares its own, as a new process does. */
export function forgetSensitiveKeys(): void {
  if (extraKeys.size === 0) return
  extraKeys.clear()
  verdicts.clear()
  fragmentCache = undefined
}

/** What a key hides: nothing, its whole value, or the strings directly under it. */
export function keyVerdict(key: string): KeyVerdict {
  let known = verdicts.get(key)
  if (known === undefined) {
    const k = normalizeKey(key)
    // `--password` as a key names a flag (an unknown flag's suggestions), not a field holding a value.
    known =
      ALLOWED_KEYS.has(k) || key.startsWith('-')
        ? 'plain'
        : matches(k, SECRET_NAMES) || matches(k, extraKeys)
          ? 'secret'
          : matches(k, CONTAINER_NAMES)
            ? 'container'
            : 'plain'
    // Bounded: a stream of objects keyed by ids would otherwise grow it without end.
    if (verdicts.size >= 4096) verdicts.clear()
    verdicts.set(key, known)
  }
  return known
}

/** True when a key names something secret. */
export function isSensitiveKey(key: string): boolean {
  return keyVerdict(key) !== 'plain'
}

/**
 * One word of every sensitive name, lower case. Each word of a key appears contiguously in any style of the key
 * (`dbPassword`, `db-password`), so text without any of these words holds no sensitive key.
 */
export function keyFragments(): string[] {
  if (!fragmentCache) {
    const words = new Set<string>()
    for (const name of [...SECRET_NAMES, ...CONTAINER_NAMES, ...extraKeys]) {
      const parts = name.split('_')
      words.add(parts.reduce((a, b) => (b.length > a.length ? b : a)))
    }
    fragmentCache = [...words]
  }
  return fragmentCache
}
