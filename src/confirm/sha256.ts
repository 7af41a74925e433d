import fastSha256 from 'fast-sha256'

/**
 * SHA-256 and HMAC-SHA-256 for the write path (token MACs, the ledger's fingerprints, the policy digest), from
 * fast-sha256 (pure JavaScript, no dependencies) rather than node:crypto: loading node:crypto costs a dry-run or a
 * confirm ≈ 5 ms of its ≈ 45 (docs/performance.md, "A write without node:crypto"). A process hashes a few dozen
 * blocks once, in V8's interpreter, where a compression function without calls per round runs several times
 * faster than one with them ("The write path's hash", same file). The digests are the same bytes.
 */
// A UMD module: its CommonJS exports are not visible to Node's named-import analysis, so they come off the default.
const { HMAC, hash } = fastSha256 as unknown as typeof import('fast-sha256')
const utf8 = new TextEncoder()

/** SHA-256 of a text's UTF-8 bytes, as hex. */
export function sha256Hex(text: string): string {
  return Buffer.from(hash(utf8.encode(text))).toString('hex')
}

type Keyed = { bytes: Uint8Array; mac: InstanceType<typeof HMAC> }

// A run MACs several parts under one secret: the keyed state (two compressions) is made once per key and restored
// before each MAC. Held only as long as the key is, and made again if the key's bytes ever change in place.
const keyed = new WeakMap<Uint8Array, Keyed>()

/** HMAC-SHA-256 of a text's UTF-8 bytes under `key`. */
export function hmacSha256(key: Uint8Array, text: string): Buffer {
  let entry = keyed.get(key)
  if (!entry || !equalBytes(entry.bytes, key)) {
    entry = { bytes: Uint8Array.from(key), mac: new HMAC(key) }
    keyed.set(key, entry)
  }
  const mac = entry.mac.reset().update(utf8.encode(text)).digest()
  return Buffer.from(mac.buffer, mac.byteOffset, mac.byteLength)
}

/** True when both hold the same bytes; the time taken depends on the length only, never on where they differ. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number)
  return diff === 0
}
