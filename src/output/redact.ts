/**
 * The one redactor (spec 002 §10). Its callers are the choke points on the way out — the renderer (envelopes,
 * text), the NDJSON writer, the stderr guard, the audit writer (src/audit, home of the argv scrubber) — and the
 * framework's own state files (job results, idempotency replays), so a new output path cannot forget it. See
 * docs/contract.md, "Redaction".
 *
 * - A value under a sensitive key (in any key style) is hidden whole: string, number, object or array.
 * - A string has its known secrets (plain or encoded), embedded JSON / form bodies and credential shapes redacted.
 * - Two sibling strings (adjacent among an object's or array's string values) that hold a known secret across
 *   their seam are both hidden whole.
 * - A cheap prefilter (one regular expression of literal words, plus the known secrets) proves most text
 *   clean, so the walk, the parse and the shape rules run only on text that could hold something.
 */
import { forgetSensitiveKeys, keyFragments, keyVerdict, sensitiveKeysSignature } from './redact-keys.js'
import { provenUnder } from './redact-proof.js'
import {
  forgetSecrets,
  hasSecrets,
  onSecretRegistered,
  replaceSecrets,
  searchEveryText,
  secretNeedles,
  splitSecret,
} from './redact-secrets.js'
import { REDACTED, redactShapes, SHAPE_FRAGMENTS } from './redact-shapes.js'

export { addSensitiveKeys, isSensitiveKey, normalizeKey } from './redact-keys.js'
export { RawScrubber, registerSecret } from './redact-secrets.js'

/**
 * Forget every secret and tool-declared key the process registered: a session opening for an in-process run starts
 * from the built-in rules alone, as a process does (another run's secrets are not this run's to know).
 */
export function resetRedaction(): void {
  forgetSecrets()
  forgetSensitiveKeys()
}
export { REDACTED, tokenLike } from './redact-shapes.js'

let prefilter: RegExp | undefined
let builtFor: string[] | undefined
/** Scrubbed keys by raw key (most keys are clean and repeat). */
const keyCache = new Map<string, string>()
onSecretRegistered(() => {
  keyCache.clear()
  prefilter = undefined
})

/**
 * Prefilters built for sets of key words alone (no secret registered), by those words: every in-process run (an
 * MCP server's read) forgets and re-declares the same keys, and building the expression is most of a small
 * run's redaction. An expression holding a secret's runs is never kept past its secrets.
 */
const keyOnly = new Map<string, RegExp>()
/** Prefilter sources the build made for a tool's own key words (no secret known), by those words. */
const stored = new Map<string, string>()

/** One regular expression for the words of every shape and sensitive key and the runs of every known secret. */
function fragmentRegex(): RegExp {
  const keys = keyFragments()
  if (!prefilter || builtFor !== keys) {
    // The expression ignores case: an ASCII run is folded (hex in either case is then one run); another is kept
    // as it is, since folding it can change it (`İ` lower-cases to two characters).
    const fold = (n: string) => (/^[\x20-\x7e]*$/.test(n) ? n.toLowerCase() : n)
    const runs = secretNeedles().map(fold)
    const signature = runs.length === 0 ? keys.join('\n') : undefined
    let built = signature === undefined ? undefined : keyOnly.get(signature)
    if (!built) {
      const source = signature === undefined ? undefined : stored.get(signature)
      built = new RegExp(source ?? prefilterSource([...new Set([...SHAPE_FRAGMENTS, ...keys, ...runs])]), 'iu')
      if (signature !== undefined) {
        if (keyOnly.size >= 8) keyOnly.clear()
        keyOnly.set(signature, built)
      }
    }
    prefilter = built
    builtFor = keys
    keyCache.clear()
  }
  return prefilter
}

/**
 * The prefilter of the key words declared now, for the build to store beside the bundle's code: building it is
 * most of a small run's redaction (≈ 0.2 ms). Undefined while a secret is known (its runs are never stored).
 */
export function prefilterMemo(): { words: string; source: string } | undefined {
  if (secretNeedles().length > 0) return undefined
  const keys = keyFragments()
  return { words: keys.join('\n'), source: prefilterSource([...new Set([...SHAPE_FRAGMENTS, ...keys])]) }
}

/** Take a prefilter the build stored ({@link prefilterMemo}): a run whose key words are the same uses it. */
export function rememberPrefilter(memo: { words: string; source: string }): void {
  stored.set(memo.words, memo.source)
}

function prefilterSource(all: string[]): string {
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  // A word that contains another is implied by it; grouping by first character lets the engine dispatch once.
  // Plain loops: this runs once per process, cold, where a callback per pair of words costs most of it.
  const groups = new Map<string, string[]>()
  words: for (const w of all) {
    for (const other of all) if (other !== w && w.includes(other)) continue words
    const rest = groups.get(w[0]!)
    if (rest) rest.push(w.slice(1))
    else groups.set(w[0]!, [w.slice(1)])
  }
  const source: string[] = []
  for (const [first, rest] of groups) source.push(`${literal(first)}(?:${rest.map(literal).join('|')})`)
  return source.join('|')
}

/**
 * Whether redaction could change `text`: false means it holds no sensitive key name, no credential shape and
 * no known secret, at any depth of JSON escaping. Works on a serialised document as well as on one string.
 */
export function mayNeedRedaction(text: string): boolean {
  return searchEveryText() || fragmentRegex().test(text)
}

const MAX_EMBEDDED = 256 * 1024

/** JSON text inside a string (an upstream error body): parsed, redacted, re-serialised only if it changed. */
function embedded(text: string, nesting: number): string | undefined {
  if (text.length > MAX_EMBEDDED) return undefined
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const start = text.indexOf(open)
    const end = text.lastIndexOf(close)
    if (start === -1 || end <= start) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(text.slice(start, end + 1))
    } catch {
      continue
    }
    const clean = walk(parsed, 0, false, nesting + 1)
    const same = JSON.stringify(parsed) === JSON.stringify(clean)
    // Strictly shorter than `text`, so this ends.
    const head = redactText(text.slice(0, start), nesting)
    const tail = redactText(text.slice(end + 1), nesting)
    return `${head}${same ? text.slice(start, end + 1) : JSON.stringify(clean)}${tail}`
  }
  return undefined
}

/** JSON text nested this deep in strings is not data anyone reads: it is hidden whole rather than followed. */
const MAX_NESTING = 8

/** `nesting` counts JSON documents inside strings, not object depth. */
function redactText(text: string, nesting: number): string {
  if (!mayNeedRedaction(text)) return text
  if (nesting >= MAX_NESTING) return REDACTED
  const known = replaceSecrets(text)
  return embedded(known, nesting) ?? redactShapes(known)
}

/** Scrub secrets out of a string (known secrets, embedded JSON and form bodies, credential shapes). */
export function redactString(value: string): string {
  return redactText(value, 0)
}

function safeKey(key: string): string {
  // The cache holds names scrubbed under the current keys and secrets: a key declared since empties it here.
  fragmentRegex()
  let out = keyCache.get(key)
  if (out === undefined) {
    out = redactText(key, 0)
    if (keyCache.size >= 4096) keyCache.clear()
    keyCache.set(key, out)
  }
  return out
}

const SCHEMA_WORDS = new Set([
  'type',
  'description',
  'items',
  'properties',
  'required',
  'enum',
  'const',
  'format',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  '$ref',
  'additionalProperties',
  'title',
  'default',
  'examples',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'nullable',
])

/** A member of a JSON Schema's `properties` (as in `reference`): it describes a value, it is not one. */
function isSchema(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const keys = Object.keys(value)
  return keys.length > 0 && keys.every((k) => SCHEMA_WORDS.has(k))
}

/**
 * Which of these sibling values to hide whole: adjacent string values (other values between them do not count)
 * that hold a registered secret across their seam, in either order.
 */
function splitSiblings(values: unknown[]): Set<number> | undefined {
  let out: Set<number> | undefined
  let prev = -1
  for (const [i, v] of values.entries()) {
    if (typeof v !== 'string') continue
    if (prev !== -1 && splitSecret(values[prev] as string, v)) {
      out ??= new Set()
      out.add(prev).add(i)
    }
    prev = i
  }
  return out
}

/** Counts replacements, so that a document the prefilter suspected but that holds nothing is not serialised twice. */
let changes = 0

/**
 * The walk of {@link redactForOutput}. With `copy` false it builds nothing and only counts what it would change
 * (in `changes`): {@link redactedJson} asks that first, since most documents its prefilter suspects hold nothing,
 * and on a large one (`reference` of a thousand commands, 1.4 MB) the copy and its garbage cost most of the walk.
 * One function for both, so the count and the copy can never disagree on what is redacted.
 */
function walk(value: unknown, depth: number, schemaMembers: boolean, nesting: number, copy = true): unknown {
  if (typeof value === 'string') {
    const out = redactText(value, nesting)
    if (out !== value) changes++
    return out
  }
  if (value === null || typeof value !== 'object') return value
  if (depth > 64) {
    changes++
    return REDACTED
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON
  if (typeof toJSON === 'function') return walk(toJSON.call(value), depth + 1, false, nesting, copy)
  // An envelope's `data` the build proved clean under the same rules (redact-proof.ts): counting finds nothing there.
  if (!copy && depth === 1 && nesting === 0 && !schemaMembers && isProven(value)) return value
  if (Array.isArray(value)) {
    const split = hasSecrets() ? splitSiblings(value) : undefined
    const each = (v: unknown, i: number) => {
      if (!split?.has(i)) return walk(v, depth + 1, false, nesting, copy)
      changes++
      return REDACTED
    }
    if (copy) return value.map(each)
    value.forEach(each)
    return value
  }
  const entries = Object.entries(value as Record<string, unknown>)
  const split = hasSecrets() ? splitSiblings(entries.map(([, child]) => child)) : undefined
  const out: Record<string, unknown> | undefined = copy ? {} : undefined
  // An index rather than `entries.entries()`: no iterator and no pair per key, on a walk that mostly runs cold.
  for (let i = 0; i < entries.length; i++) {
    const [key, child] = entries[i]!
    const verdict = keyVerdict(key)
    const name = safeKey(key)
    if (name !== key) changes++
    let next: unknown
    if (split?.has(i)) {
      changes++
      next = REDACTED
    } else if (
      verdict === 'plain' ||
      (schemaMembers && isSchema(child)) ||
      child === null ||
      typeof child === 'boolean'
    )
      next = walk(child, depth + 1, key === 'properties', nesting, copy)
    else if (verdict === 'container' && typeof child === 'object') next = walk(child, depth + 1, false, nesting, copy)
    else if (child === undefined) next = undefined
    else {
      changes++
      next = REDACTED
    }
    if (out) out[name] = next
  }
  return out ?? value
}

/** Whether the build proved `value` clean under this run's rules: no secret registered, the same declared keys. */
function isProven(value: object): boolean {
  const keys = provenUnder(value)
  return keys !== undefined && !hasSecrets() && keys === sensitiveKeysSignature()
}

/**
 * The redactor every output path calls: a deep copy of `value` with the values of sensitive keys hidden and
 * secrets scrubbed out of every string. Idempotent (`<redacted>` itself holds nothing to redact).
 */
export function redactForOutput<T>(value: T): T {
  return walk(value, 0, false, 0) as T
}

/**
 * The same rules for the framework's own state files (job results and errors, idempotency replays): what is
 * printed later from them passes the renderer again, but no secret is written at rest in the first place.
 */
export const redactAtRest = redactForOutput

/**
 * `JSON.stringify(redactForOutput(value))`, at the cost of one `JSON.stringify` when the document is proven
 * clean (the common case, and the one a long stream pays per item).
 */
export function redactedJson(value: unknown, space?: number): string {
  const text = JSON.stringify(value, null, space)
  if (text === undefined || !mayNeedRedaction(text)) return text
  // Count first, copy only when something is to be redacted (see walk).
  const before = changes
  walk(value, 0, false, 0, false)
  return changes === before ? text : JSON.stringify(redactForOutput(value), null, space)
}
