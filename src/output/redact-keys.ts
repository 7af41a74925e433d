/**
 * Which keys name a secret. A key is judged in any style (`accessToken`, `refresh-token`, `X-Api-Key`,
 * `DB_PASSWORD`): it is normalised to snake_case words first, then matched on its last words.
 */

/** Names whose whole value is a secret, whatever its shape (string, number, object, array). */
export const SECRET_NAMES: readonly string[] = [
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
export const CONTAINER_NAMES: readonly string[] = ['credential', 'credentials']

/** Keys that look sensitive but are the contract's own output (a confirm token is a capability the agent needs). */
export const ALLOWED_KEYS: ReadonlySet<string> = new Set(['confirm_token', 'token_id', 'tokens'])

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

const SECRET_SET = new Set(SECRET_NAMES)
const CONTAINER_SET = new Set(CONTAINER_NAMES)

/**
 * Whether `k` is one of `names` or ends in `_` and one of them. Each `_` of `k` starts one candidate suffix, so a
 * key costs a few set lookups instead of a string built and compared per name (keys are judged cold, on every run).
 */
function matches(k: string, names: ReadonlySet<string>): boolean {
  if (names.has(k)) return true
  for (let at = k.indexOf('_'); at !== -1; at = k.indexOf('_', at + 1)) if (names.has(k.slice(at + 1))) return true
  return false
}

/**
 * Any word of {@link keyFragments}, ASCII case ignored. A key that matches a name holds that name's word as a run
 * of its own ASCII letters and digits (normalising only inserts `_`, turns other characters into `_` and trims),
 * so a key without any word is plain, and most keys are judged by this one test.
 */
let keyWords: RegExp | undefined

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
  keyWords = undefined
}

/** The tool-declared keys, as one text: two runs with the same one judge every key alike (redact-proof.ts). */
export function sensitiveKeysSignature(): string {
  return JSON.stringify([...extraKeys].sort())
}

/** Forget the tool-declared keys: each in-process run declares its own, as a new process does. */
export function forgetSensitiveKeys(): void {
  if (extraKeys.size === 0) return
  extraKeys.clear()
  verdicts.clear()
  fragmentCache = undefined
  keyWords = undefined
}

/** What a key hides: nothing, its whole value, or the strings directly under it. */
export function keyVerdict(key: string): KeyVerdict {
  let known = verdicts.get(key)
  if (known === undefined) {
    // The words are normalised names' parts: `[a-z0-9]` only, nothing to escape.
    keyWords ??= new RegExp(keyFragments().join('|'), 'i')
    const k = keyWords.test(key) ? normalizeKey(key) : ''
    // `--password` as a key names a flag (an unknown flag's suggestions), not a field holding a value.
    known =
      k === '' || ALLOWED_KEYS.has(k) || key.startsWith('-')
        ? 'plain'
        : matches(k, SECRET_SET) || matches(k, extraKeys)
          ? 'secret'
          : matches(k, CONTAINER_SET)
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
