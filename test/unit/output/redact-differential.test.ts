/**
 * The redactor's cheaper judgement against the one it replaced, over a large generated corpus: the same verdict for
 * every key and the same prefilter answer for every text, with and without tool-declared keys and secrets. The old
 * algorithms are copied here as they were (`matches` building `_name` per name; the prefilter's words filtered by
 * callbacks), over the redactor's own lists of names, so a later change to how keys are judged shows up as a
 * difference, and a change to the lists does not.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { addSensitiveKeys, mayNeedRedaction, registerSecret, resetRedaction } from '../../../src/output/redact.js'
import {
  ALLOWED_KEYS,
  CONTAINER_NAMES,
  keyFragments,
  keyVerdict,
  normalizeKey,
  SECRET_NAMES,
} from '../../../src/output/redact-keys.js'
import { searchEveryText, secretNeedles } from '../../../src/output/redact-secrets.js'
import { SHAPE_FRAGMENTS } from '../../../src/output/redact-shapes.js'

function oldMatches(k: string, names: Iterable<string>): boolean {
  for (const n of names) if (k === n || k.endsWith(`_${n}`)) return true
  return false
}

function oldVerdict(key: string, extra: Iterable<string>): string {
  const k = normalizeKey(key)
  return ALLOWED_KEYS.has(k) || key.startsWith('-')
    ? 'plain'
    : oldMatches(k, SECRET_NAMES) || oldMatches(k, extra)
      ? 'secret'
      : oldMatches(k, CONTAINER_NAMES)
        ? 'container'
        : 'plain'
}

function oldPrefilter(): RegExp {
  const fold = (n: string) => (/^[\x20-\x7e]*$/.test(n) ? n.toLowerCase() : n)
  const all = [...new Set([...SHAPE_FRAGMENTS, ...keyFragments(), ...secretNeedles().map(fold)])]
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const words = all.filter((w) => !all.some((other) => other !== w && w.includes(other)))
  const groups = new Map<string, string[]>()
  for (const w of words) groups.set(w[0]!, [...(groups.get(w[0]!) ?? []), w.slice(1)])
  const source = [...groups].map(([first, rest]) => `${literal(first)}(?:${rest.map(literal).join('|')})`)
  return new RegExp(source.join('|'), 'iu')
}

/** A small seeded generator, so a failure names a corpus that can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = [
  ...SECRET_NAMES.flatMap((n) => n.split('_')),
  ...CONTAINER_NAMES,
  'confirm',
  'tokens',
  'id',
  'user',
  'name',
  'db',
  'x',
  'api',
  'key',
  'access',
  'auth',
  'code',
  'device',
  'refresh',
  'shipping',
  'private',
  'public',
  'passwords',
  'tokenizer',
  'keys',
  'exit',
  'error',
  'bearer',
  'basic',
  'ghp',
]
const ODD = ['İ', 'K', 'ſ', 'é', 'ß', '—', '🔑', 'ＴＯＫＥＮ', 'токен', '\u0000', ' ', '-', '_', '.', '$', '2', '42']

/** Keys in every style: snake, camel, kebab, upper, digits, leading dashes, non-ASCII, very long. */
function corpusKeys(next: () => number, count: number): string[] {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!
  const out: string[] = ['', '_', '-', '--password', 'confirm_token', 'TOKEN_ID', 'x'.repeat(5000) + 'Token']
  for (let i = 0; i < count; i++) {
    const parts = Array.from({ length: 1 + Math.floor(next() * 4) }, () => (next() < 0.15 ? pick(ODD) : pick(WORDS)))
    const style = Math.floor(next() * 6)
    let key =
      style === 0
        ? parts.join('_')
        : style === 1
          ? parts.map((p, j) => (j === 0 ? p : p[0]!.toUpperCase() + p.slice(1))).join('')
          : style === 2
            ? parts.join('-')
            : style === 3
              ? parts.join('_').toUpperCase()
              : style === 4
                ? parts.map((p) => p[0]!.toUpperCase() + p.slice(1)).join('-')
                : parts.join(pick(ODD))
    if (next() < 0.1) key += String(Math.floor(next() * 100))
    if (next() < 0.05) key = `-${key}`
    if (next() < 0.02) key = key.repeat(200)
    out.push(key)
  }
  return out
}

/** Texts: prose with and without sensitive words, credential shapes, escaped JSON, non-ASCII, long runs. */
function corpusTexts(next: () => number, keys: string[], count: number): string[] {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!
  const pieces = [
    'a confirm',
    'token',
    'Bearer',
    'abcDEF1234567890xyz',
    'eyJhbGciOi',
    'ghp_',
    'AKIA',
    'https://u:p@host',
    '\\/',
    '\\u0041',
    'Basic dXNlcjpwYXNz',
    '-----BEGIN',
    'sk-',
    'xoxb-',
    'whsec_',
    'plain words',
    '{"a":1}',
    'key=value',
    ':',
    '=',
    '"',
    'İ',
    'K',
    'ſecret',
    'TOKEN',
    'pass',
    'word',
    'credential',
    'hf_',
    'npm_',
    'AIza',
  ]
  const out: string[] = ['', 'x'.repeat(100_000), `${'a'.repeat(50_000)}token`]
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(next() * 6)
    out.push(
      Array.from({ length: n }, () => (next() < 0.3 ? pick(keys) : pick(pieces))).join(pick([' ', '', ': ', '='])),
    )
  }
  return out
}

afterEach(() => resetRedaction())

describe('redact, the cheaper judgement against the old', () => {
  for (const seed of [1, 2, 3]) {
    it(`judges every key and text alike (corpus ${seed})`, () => {
      const next = random(seed)
      const keys = corpusKeys(next, 6000)
      const texts = corpusTexts(next, keys, 6000)
      const compare = (extra: string[]) => {
        const filter = oldPrefilter()
        const seen = { plain: 0, secret: 0, container: 0 }
        for (const key of keys) {
          const verdict = keyVerdict(key)
          seen[verdict]++
          if (verdict !== oldVerdict(key, extra)) expect([key, verdict]).toEqual([key, oldVerdict(key, extra)])
        }
        // The corpus exercises every verdict, not only the plain ones.
        expect(Math.min(...Object.values(seen))).toBeGreaterThan(50)
        expect(searchEveryText()).toBe(false)
        for (const text of [...keys, ...texts]) {
          const suspect = mayNeedRedaction(text)
          if (suspect !== filter.test(text)) expect([text, suspect]).toEqual([text, !suspect])
        }
      }
      compare([])
      // Tool-declared keys change both the verdicts and the prefilter's words.
      const declared = keys.filter((_, i) => i % 997 === 5).concat(['shipping_code', 'oauth2_ticket', 'PIN'])
      addSensitiveKeys(declared)
      compare([...new Set(declared.map(normalizeKey).filter(Boolean))])
      // Known secrets add their runs to the prefilter.
      registerSecret('s3cr3t-Value-99')
      registerSecret('İstanbul-Passphrase-7')
      compare([...new Set(declared.map(normalizeKey).filter(Boolean))])
    })
  }
})
