/**
 * SHA-256 digests the build computed for texts a run would otherwise hash (today the tool's own policy, whose
 * digest every write binds): the bundle registers them when it loads, and `sha256Hex` answers a text it holds
 * from here. The text itself is the key, so a policy edited after the build is simply hashed again. A write path
 * hashes in V8's interpreter (src/confirm/sha256.ts says why), where a 300-byte policy costs a dry-run ≈ 0.5 ms.
 */
const known = new Map<string, string>()

/** Register `text → hex digest` pairs (the bundle's entry does, from what the build computed). */
export function rememberDigests(pairs: Readonly<Record<string, string>>): void {
  for (const [text, hex] of Object.entries(pairs)) if (/^[0-9a-f]{64}$/.test(hex)) known.set(text, hex)
}

/** The digest the build computed for exactly this text, if it did. */
export function knownDigest(text: string): string | undefined {
  return known.get(text)
}
