import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'

/**
 * SHA-256 and HMAC-SHA-256 for the write path (token MACs, the ledger's fingerprints, the policy digest), from
 * @noble/hashes (audited, pure JavaScript) rather than node:crypto: loading node:crypto costs a dry-run or a
 * confirm ≈ 5 ms of its ≈ 45 (docs/performance.md, "A write without node:crypto"). The digests are the same bytes.
 */
const utf8 = new TextEncoder()

/** SHA-256 of a text's UTF-8 bytes, as hex. */
export function sha256Hex(text: string): string {
  return Buffer.from(sha256(utf8.encode(text))).toString('hex')
}

type Keyed = { bytes: Uint8Array; state: ReturnType<typeof hmac.create> }

// A run MACs several parts under one secret: the keyed state (two compressions) is made once per key and cloned,
// never updated itself. Held only as long as the key is, and made again if the key's bytes ever change in place.
const keyed = new WeakMap<Uint8Array, Keyed>()

/** HMAC-SHA-256 of a text's UTF-8 bytes under `key`. */
export function hmacSha256(key: Uint8Array, text: string): Buffer {
  let entry = keyed.get(key)
  if (!entry || !equalBytes(entry.bytes, key)) {
    entry = { bytes: Uint8Array.from(key), state: hmac.create(sha256, key) }
    keyed.set(key, entry)
  }
  const mac = entry.state.clone().update(utf8.encode(text)).digest()
  return Buffer.from(mac.buffer, mac.byteOffset, mac.byteLength)
}

/** True when both hold the same bytes; the time taken depends on the length only, never on where they differ. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number)
  return diff === 0
}
