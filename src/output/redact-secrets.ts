/**
 * The secret values this process knows (tokens read from env, keychain or file, refreshed tokens, values of
 * sensitive flags). They are scrubbed wherever they show up, in every format, `raw` included.
 */
import { encodedForms, jsonRun } from './redact-encodings.js'
import { REDACTED } from './redact-shapes.js'

/** The values registered, as given (the split rule looks for these). */
let originals: string[] = []
/** Known secrets and their encoded forms, longest first, so that one containing another is replaced whole. */
let secrets: string[] = []
/**
 * Literal runs the prefilter looks for, none containing another: every text holding a secret, one of its encoded
 * forms, or the secret split in two, holds one of them at any depth of JSON escaping.
 */
let needles: string[] = []
/** True when some form has no run long enough to look for: then every text must be searched in full. */
let unsearchable = false
let maxBytes = 0
const listeners = new Set<() => void>()

const MIN_LENGTH = 6

/** Add a needle unless a shorter one already implies it; drop the ones it implies. */
function addNeedle(needle: string | null | undefined): void {
  if (needle === null) return
  if (needle === undefined) {
    unsearchable = true
    return
  }
  if (needles.some((n) => needle.includes(n))) return
  needles = [...needles.filter((n) => !n.includes(needle)), needle]
}

/**
 * Register a secret value held by this process, so that it is scrubbed wherever it shows up: an upstream error
 * body that echoes it, an exception message, a log line, raw output. Its base64, percent-encoded and hex forms
 * are registered with it, and so is the secret split over two sibling values. Values shorter than 6 characters
 * are ignored (they would scrub ordinary words).
 */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string' || value.length < MIN_LENGTH || originals.includes(value)) return
  originals = [...originals, value]
  const encoded = encodedForms(value, MIN_LENGTH)
  const forms = [value, ...encoded.map((f) => f.form)]
  secrets = [...new Set([...secrets, ...forms])].sort((a, b) => b.length - a.length)
  // Split in two at any point, one of the pieces holds the first or the second half: their runs imply the
  // whole secret's too.
  const half = Math.ceil(value.length / 2)
  addNeedle(jsonRun(value.slice(0, half), 3))
  addNeedle(jsonRun(value.slice(value.length - half), 3))
  for (const form of encoded) addNeedle(form.needle)
  for (const form of forms) maxBytes = Math.max(maxBytes, Buffer.byteLength(form))
  for (const listener of listeners) listener()
}

/** Called whenever a secret is registered (caches of verdicts drop what they knew). */
export function onSecretRegistered(listener: () => void): void {
  listeners.add(listener)
}

/** Whether `text` might contain a known secret (plain, encoded or split), at any depth of JSON escaping. */
export function mayHoldSecret(text: string): boolean {
  if (unsearchable) return true
  for (const needle of needles) if (text.includes(needle)) return true
  return false
}

/**
 * The literal runs the prefilter looks for (the redactor folds them into its one regular expression, cheaper than
 * a search per run). Unless {@link searchEveryText}, a text holding none of them holds no known secret.
 */
export function secretNeedles(): readonly string[] {
  return needles
}

/** True when some secret has no run to look for: every text must then take the full path. */
export function searchEveryText(): boolean {
  return unsearchable
}

/** Replace every known secret, and every encoded form of one, in `text`. */
export function replaceSecrets(text: string): string {
  let out = text
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  return out
}

/** Whether a registered secret crosses the seam of `a` followed by `b` (each window is shorter than it). */
function straddles(a: string, b: string, secret: string): boolean {
  const reach = secret.length - 1
  // Cheap refusals first: most sibling pairs cannot even hold the secret's first and last characters there.
  if (a.length + b.length <= reach) return false
  const end = b.indexOf(secret[reach]!)
  if (end === -1 || end >= reach || a.lastIndexOf(secret[0]!) < Math.max(0, a.length - reach)) return false
  return (a.slice(-reach) + b.slice(0, reach)).includes(secret)
}

/**
 * Whether two sibling values, joined in either order, hold a registered secret across their seam: an upstream
 * that splits a token over two fields (`{ "a": "sec", "b": "ret" }`, `token_part1` / `token_part2`). Bounded: it
 * looks only at the seam, never at more than twice a secret's length.
 */
export function splitSecret(a: string, b: string): boolean {
  for (const secret of originals) if (straddles(a, b, secret) || straddles(b, a, secret)) return true
  return false
}

/** Whether any secret is registered (the split rule has nothing to look for otherwise). */
export function hasSecrets(): boolean {
  return originals.length > 0
}

/** Forget every registered secret: each in-process run (and test) starts with none, as a new process does. */
export function forgetSecrets(): void {
  // Nothing registered, nothing to forget: the caches built on the empty set stay good (a run of an MCP server's
  // read starts here every call).
  if (originals.length === 0) return
  originals = []
  secrets = []
  needles = []
  unsearchable = false
  maxBytes = 0
  for (const listener of listeners) listener()
}

const MARK = Buffer.from(REDACTED)

function replaceBytes(input: Buffer): Buffer {
  let out = input
  for (const secret of secrets) {
    const needle = Buffer.from(secret)
    let at = out.indexOf(needle)
    if (at === -1) continue
    const parts: Buffer[] = []
    let from = 0
    while (at !== -1) {
      parts.push(out.subarray(from, at), MARK)
      from = at + needle.length
      at = out.indexOf(needle, from)
    }
    parts.push(out.subarray(from))
    out = Buffer.concat(parts)
  }
  return out
}

/**
 * Scrubs known secrets out of raw output, chunk by chunk: bytes that could start a secret continuing in the
 * next chunk are held back until it arrives (or the stream ends), so a secret split across chunks is caught too.
 * Bytes are never decoded: binary output stays byte for byte what the command wrote.
 */
export class RawScrubber {
  private carry: Buffer = Buffer.alloc(0)

  /** The safe part of `chunk` (with what was held back before it). */
  push(chunk: string | Uint8Array): Buffer {
    const bytes =
      typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length)
    if (secrets.length === 0 && this.carry.length === 0) return bytes
    const scrubbed = replaceBytes(this.carry.length > 0 ? Buffer.concat([this.carry, bytes]) : bytes)
    const hold = Math.min(scrubbed.length, Math.max(0, maxBytes - 1))
    this.carry = Buffer.from(scrubbed.subarray(scrubbed.length - hold))
    return scrubbed.subarray(0, scrubbed.length - hold)
  }

  /** Whatever was held back, scrubbed. */
  end(): Buffer {
    const rest = replaceBytes(this.carry)
    this.carry = Buffer.alloc(0)
    return rest
  }
}
