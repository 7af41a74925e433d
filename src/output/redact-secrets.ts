/**
 * The secret values this process knows (tokens read from env, keychain or file, refreshed tokens, values of
 * sensitive flags). They are scrubbed wherever they show up, in every format, `raw` included.
 */
import { REDACTED } from './redact-shapes.js'

/** Known secrets, longest first, so that one containing another is replaced whole. */
let secrets: string[] = []
/** Literal runs of each secret that survive JSON escaping (no quote, backslash, slash, control character or surrogate). */
let runs: string[] = []
/** True when some secret has no run long enough to look for: then every text must be searched in full. */
let unsearchable = false
let maxBytes = 0
const listeners = new Set<() => void>()

const MIN_LENGTH = 6

function longestRun(secret: string): string {
  let best = ''
  // Surrogates are excluded too: JSON.stringify escapes a lone one.
  for (const run of secret.split(/["\\/\u0000-\u001f\ud800-\udfff]+/)) if (run.length > best.length) best = run
  return best
}

/**
 * Register a secret value held by this process, so that it is scrubbed wherever it shows up: an upstream error
 * body that echoes it, an exception message, a log line, raw output. Values shorter than 6 characters are
 * ignored (they would scrub ordinary words).
 */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string' || value.length < MIN_LENGTH || secrets.includes(value)) return
  secrets = [...secrets, value].sort((a, b) => b.length - a.length)
  const run = longestRun(value)
  if (run.length >= 4) runs.push(run)
  else unsearchable = true
  maxBytes = Math.max(maxBytes, Buffer.byteLength(value))
  for (const listener of listeners) listener()
}

/** Called whenever a secret is registered (caches of verdicts drop what they knew). */
export function onSecretRegistered(listener: () => void): void {
  listeners.add(listener)
}

/** Whether `text` might contain a known secret, at any depth of JSON escaping. */
export function mayHoldSecret(text: string): boolean {
  if (unsearchable) return true
  for (const run of runs) if (text.includes(run)) return true
  return false
}

/** Replace every known secret in `text`. */
export function replaceSecrets(text: string): string {
  let out = text
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  return out
}

/** Forget every registered secret (in-process tests only). */
export function clearSecretsForTest(): void {
  secrets = []
  runs = []
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
