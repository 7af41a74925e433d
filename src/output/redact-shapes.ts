/**
 * Credential *shapes* in free text: an Authorization header value, `Bearer <token-like>`, `Basic <base64 of
 * user:pass>`, URL userinfo, `key=value` and `"key": "value"` pairs under a sensitive key, well-known key
 * prefixes, JWTs and private-key blocks. Never English words: "basic training plan", "token economy review"
 * and "bearer bonds" pass unchanged, because what follows the word does not look like a credential.
 */
import { isSensitiveKey } from './redact-keys.js'

/** What replaces a secret. */
export const REDACTED = '<redacted>'

/** A run that looks machine-made: long, and either letters mixed with digits or case-mixed random letters. */
export function tokenLike(run: string): boolean {
  if (run.length < 16) return false
  for (const segment of run.split(/[-_.~+/=]+/)) {
    if (segment.length >= 8 && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment)) return true
    if (segment.length >= 20 && /^[A-Za-z]+$/.test(segment)) {
      let flips = 0
      for (let i = 1; i < segment.length; i++) {
        const upper = (c: string) => c >= 'A' && c <= 'Z'
        if (upper(segment[i]!) !== upper(segment[i - 1]!)) flips++
      }
      if (flips * 3 >= segment.length) return true
    }
  }
  return false
}

/** After `Authorization: <scheme>`: a value of 8+ characters with a digit, a symbol or mixed case. */
function credentialish(value: string): boolean {
  return value.length >= 8 && (/[0-9._~+/=-]/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value)))
}

/** `Basic` credentials are base64 of `user:password`: decode and look, so "Basic training" stays prose. */
function basicCredential(run: string): boolean {
  if (run.length < 4 || run.length % 4 === 1) return false
  const text = Buffer.from(run, 'base64').toString('latin1')
  return /^[\x21-\x7e]*:[\x20-\x7e]*$/.test(text) && text.length >= 2
}

const AUTH_SCHEMES = new Set([
  'bearer',
  'basic',
  'token',
  'digest',
  'negotiate',
  'ntlm',
  'hoba',
  'mutual',
  'vapid',
  'apikey',
  'key',
  'oauth',
  'aws4-hmac-sha256',
])

/** `needs`: literal (lower-case) text the pattern cannot match without; a rule whose words are absent is skipped. */
type Rule = { needs: readonly string[]; pattern: RegExp; replace: (match: string, ...groups: string[]) => string }

const RULES: Rule[] = [
  // A private key block, also when cut short (an upstream body is truncated).
  {
    needs: ['-----begin'],
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
    replace: () => REDACTED,
  },
  // An Authorization header value: `<scheme> <credentials>` with a known scheme, or one token-like value.
  {
    needs: ['authorization'],
    pattern: /\b((?:proxy-)?authorization"?\s*[:=]\s*"?)([A-Za-z][\w-]*)(?:(\s+)([^\s",;]+))?/gi,
    replace: (m, head, first, space, second) => {
      if (second !== undefined && AUTH_SCHEMES.has(first!.toLowerCase()) && credentialish(second))
        return `${head}${first}${space}${REDACTED}`
      if (tokenLike(first!)) return `${head}${REDACTED}${space ?? ''}${second ?? ''}`
      return m
    },
  },
  // A Cookie / Set-Cookie header: everything after `name=`.
  {
    needs: ['cookie'],
    pattern: /\b((?:set-)?cookie\s*:\s*)([^=\s;,"]+=[^\n"]*)/gi,
    replace: (_m, head) => `${head}${REDACTED}`,
  },
  // `X-Api-Key: <token-like>`, `client_secret: <token-like>`: a sensitive name, a colon, a machine-made value.
  {
    needs: [':'],
    pattern: /\b([A-Za-z][\w-]{0,99})(\s*:\s*)([A-Za-z0-9._~+/=-]{16,})/g,
    replace: (m, key, colon, run) => (isSensitiveKey(key!) && tokenLike(run!) ? `${key}${colon}${REDACTED}` : m),
  },
  // `Bearer <token-like>`; runs of scheme words (`bearer token <t>`) are taken as one lead.
  {
    needs: ['bearer', 'token'],
    pattern: /\b((?:(?:bearer|token)\s+)+)([A-Za-z0-9._~+/=-]+)/gi,
    replace: (m, lead, run) => (tokenLike(run!) ? `${lead}${REDACTED}` : m),
  },
  {
    needs: ['basic'],
    pattern: /\b(basic)(\s+)([A-Za-z0-9+/]+={0,2})(?![A-Za-z0-9+/=])/gi,
    replace: (m, scheme, space, run) => (basicCredential(run!) ? `${scheme}${space}${REDACTED}` : m),
  },
  { needs: ['eyj'], pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, replace: () => REDACTED },
  {
    needs: ['gh', 'github_pat_'],
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g,
    replace: () => REDACTED,
  },
  { needs: ['akia', 'asia'], pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replace: () => REDACTED },
  {
    needs: ['xox', 'k_live_', 'k_test_', 'whsec_'],
    pattern: /\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{16,})/g,
    replace: (m) => (/[0-9]/.test(m) ? REDACTED : m),
  },
  {
    needs: ['sk-', 'glpat-', 'npm_', 'hf_'],
    pattern: /\b(?:sk-[A-Za-z0-9_-]{16,}|glpat-[A-Za-z0-9_-]{16,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,})/g,
    replace: (m) => (tokenLike(m) ? REDACTED : m),
  },
  { needs: ['aiza'], pattern: /\bAIza[0-9A-Za-z_-]{35}/g, replace: () => REDACTED },
  // URL userinfo: the password of `scheme://user:password@host`, or a token used as the user name.
  {
    needs: ['://'],
    pattern: /(\b[a-z][a-z0-9+.-]*:\/\/)([^/\s:@]{1,256})(?::([^@/\s]{0,256}))?@/gi,
    replace: (m, scheme, user, password) => {
      if (password !== undefined) return password ? `${scheme}${user}:${REDACTED}@` : m
      return tokenLike(user!) ? `${scheme}${REDACTED}@` : m
    },
  },
  // `key=value` under a sensitive key: form bodies, query strings, log lines.
  {
    needs: ['='],
    pattern: /(^|[?&;,\s])([A-Za-z0-9_.%[\]-]{1,100})=([^&\s;,"']+)/g,
    replace: (m, lead, key, _value) => (isSensitiveKey(decodeKey(key!)) ? `${lead}${key}=${REDACTED}` : m),
  },
  // `"key": "value"` or `"key": 123` under a sensitive key, in JSON text that did not parse (cut short).
  {
    needs: ['"'],
    pattern: /"([^"\\\n]{1,100})"(\s*:\s*)("(?:[^"\\]|\\.)*(?:"|$)|-?\d[\d.eE+-]*)/g,
    replace: (m, key, colon) => (isSensitiveKey(key!) ? `"${key}"${colon}"${REDACTED}"` : m),
  },
]

function decodeKey(key: string): string {
  try {
    return decodeURIComponent(key)
  } catch {
    return key
  }
}

/** Replace every credential shape in `text`. */
export function redactShapes(text: string): string {
  let out = text
  const lower = text.toLowerCase()
  for (const rule of RULES) {
    if (!rule.needs.some((word) => lower.includes(word))) continue
    out = out.replace(rule.pattern, rule.replace as (m: string, ...g: unknown[]) => string)
  }
  return out
}

/**
 * Literal words that every shape above contains (case-insensitive): text with none of them holds no shape.
 * `\/` and `\u` catch escaped JSON text, whose shapes only appear once it is parsed.
 */
export const SHAPE_FRAGMENTS = [
  '-----begin',
  'authorization',
  'bearer',
  'token',
  'basic',
  'cookie',
  'eyj',
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'github_pat_',
  'akia',
  'asia',
  'xox',
  'sk-',
  'k_live_',
  'k_test_',
  'whsec_',
  'glpat-',
  'npm_',
  'hf_',
  'aiza',
  '://',
  '\\/',
  '\\u',
]
