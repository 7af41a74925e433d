/**
 * The one redactor (spec 002 §10). Applied by the renderer to everything that leaves the process: data, previews,
 * error details, notices, stderr, the audit log. Sensitive keys and credential-looking values become `<redacted>`.
 */

/** What replaces a secret. */
export const REDACTED = '<redacted>'

const SENSITIVE_NAMES = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'token',
  'authorization',
  'cookie',
  'set_cookie',
  'api_key',
  'apikey',
  'private_key',
  'credential',
  'credentials',
  'session',
]

/** Keys that look sensitive but are the contract's own output (a confirm token is a capability the agent needs). */
const ALLOWED_KEYS = new Set(['confirm_token', 'token_id', 'tokens'])

const VALUE_PATTERNS: RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b/g,
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /(?<=:\/\/[^/\s:@]{1,64}:)[^@/\s]{1,256}(?=@)/g,
]

const extraKeys = new Set<string>()
const knownSecrets = new Set<string>()
/** Verdicts by raw key: a reference document repeats a few dozen keys thousands of times. */
const keyVerdicts = new Map<string, boolean>()

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, '_')
}

/** Add tool-declared sensitive key names (matched like the built-in ones). */
export function addSensitiveKeys(keys: Iterable<string>): void {
  for (const key of keys) extraKeys.add(normalizeKey(key))
  keyVerdicts.clear()
}

/**
 * Register a secret value held by this process (a token read from env, keychain or file), so that it is scrubbed
 * wherever it shows up: an upstream error body that echoes it, an exception message, a log line.
 */
export function registerSecret(value: string | undefined | null): void {
  if (value && value.length >= 6) knownSecrets.add(value)
}

/** True when a key names something secret. */
export function isSensitiveKey(key: string): boolean {
  let known = keyVerdicts.get(key)
  if (known === undefined) {
    const k = normalizeKey(key)
    known = !ALLOWED_KEYS.has(k) && (extraKeys.has(k) || SENSITIVE_NAMES.some((n) => k === n || k.endsWith(`_${n}`)))
    // Bounded: a stream of objects keyed by ids would otherwise grow it without end.
    if (keyVerdicts.size >= 4096) keyVerdicts.clear()
    keyVerdicts.set(key, known)
  }
  return known
}

/** Scrub secrets out of a string. */
export function redactString(value: string): string {
  let out = value
  for (const secret of knownSecrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  for (const pattern of VALUE_PATTERNS) out = out.replace(pattern, REDACTED)
  return out
}

/** A deep copy of `value` with sensitive keys and credential-looking strings redacted. */
export function redact<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return redactString(value) as T
  if (value === null || typeof value !== 'object' || depth > 64) return value
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1)) as T
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    // A sensitive key hides a value, not a structure: `credentials: {configured: true}` stays readable.
    const hides =
      isSensitiveKey(key) && (typeof child === 'string' || typeof child === 'number' || typeof child === 'bigint')
    out[key] = hides ? REDACTED : redact(child, depth + 1)
  }
  return out as T
}
