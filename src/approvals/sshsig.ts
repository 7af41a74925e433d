import { createHash, createPublicKey, type KeyObject, verify } from 'node:crypto'

/*
 * SSH signatures (the SSHSIG format of OpenSSH's PROTOCOL.sshsig, what `ssh-keygen -Y sign` writes), verified with
 * node:crypto for ed25519 keys only: a person approves with the key they already have, and `ssh-keygen -Y verify`
 * accepts the same signature. Every length is checked; anything unexpected is "not a signature".
 */

const MAGIC = Buffer.from('SSHSIG')
const ARMOR = /^-----BEGIN SSH SIGNATURE-----\s+([A-Za-z0-9+/=\s]+?)\s*-----END SSH SIGNATURE-----\s*$/
const ED25519 = 'ssh-ed25519'

/** A reader of SSH wire strings (uint32 length, bytes) that fails on any overrun. */
type Wire = { bytes(n: number): Buffer; uint32(): number; string(): Buffer; done(): boolean }

function wire(buf: Buffer): Wire {
  let at = 0
  const bytes = (n: number): Buffer => {
    if (at + n > buf.length) throw new Error('truncated')
    const out = buf.subarray(at, at + n)
    at += n
    return out
  }
  const uint32 = () => bytes(4).readUInt32BE(0)
  return { bytes, uint32, string: () => bytes(uint32()), done: () => at === buf.length }
}

function sshString(b: Buffer | string): Buffer {
  const bytes = typeof b === 'string' ? Buffer.from(b) : b
  const len = Buffer.alloc(4)
  len.writeUInt32BE(bytes.length, 0)
  return Buffer.concat([len, bytes])
}

/** The raw 32-byte ed25519 key of an SSH public key blob, or undefined. */
function ed25519Raw(blob: Buffer): Buffer | undefined {
  try {
    const w = wire(blob)
    if (w.string().toString() !== ED25519) return undefined
    const key = w.string()
    return key.length === 32 && w.done() ? key : undefined
  } catch {
    return undefined
  }
}

/** The wire blob of an `ssh-ed25519 AAAA… comment` public key line, or undefined when it is not one. */
export function publicKeyBlob(line: string): Buffer | undefined {
  const [type, b64] = line.trim().split(/\s+/)
  if (type !== ED25519 || !b64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return undefined
  const blob = Buffer.from(b64, 'base64')
  return ed25519Raw(blob) ? blob : undefined
}

/**
 * The `ssh-ed25519 AAAA…` line of an ed25519 public key (the inverse of {@link publicKeyBlob}): what a policy's
 * `approvers[].key` holds, for a key made with node:crypto rather than `ssh-keygen`.
 */
export function publicKeyLine(key: KeyObject): string {
  const raw = Buffer.from(key.export({ format: 'jwk' }).x as string, 'base64url')
  return `${ED25519} ${Buffer.concat([sshString(ED25519), sshString(raw)]).toString('base64')}`
}

/** The `SHA256:…` fingerprint of a public key blob, as `ssh-keygen -l` prints it. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`
}

function keyObject(raw: Buffer): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
}

/** A parsed SSHSIG: the signer's key blob, the namespace, the hash and the raw ed25519 signature. */
export type SshSignature = { publicKey: Buffer; namespace: string; hash: 'sha256' | 'sha512'; signature: Buffer }

/** Parse an armored SSH signature; undefined for anything that is not exactly one ed25519 SSHSIG. */
export function parseSignature(armored: string): SshSignature | undefined {
  const m = ARMOR.exec(armored.trim())
  if (!m) return undefined
  try {
    const w = wire(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'))
    if (!w.bytes(6).equals(MAGIC) || w.uint32() !== 1) return undefined
    const publicKey = w.string()
    const namespace = w.string().toString()
    w.string() // reserved
    const hash = w.string().toString()
    const sig = wire(w.string())
    if (!w.done() || (hash !== 'sha256' && hash !== 'sha512')) return undefined
    if (sig.string().toString() !== ED25519) return undefined
    const signature = sig.string()
    if (!sig.done() || signature.length !== 64 || !ed25519Raw(publicKey)) return undefined
    return { publicKey, namespace, hash, signature }
  } catch {
    return undefined
  }
}

/** The bytes an SSHSIG signs over a message: the magic, the namespace, the hash name and the message's hash. */
function signedData(namespace: string, hash: 'sha256' | 'sha512', message: Buffer): Buffer {
  return Buffer.concat([
    MAGIC,
    sshString(namespace),
    sshString(''),
    sshString(hash),
    sshString(createHash(hash).update(message).digest()),
  ])
}

/**
 * Whether `armored` is a valid signature of `message` in `namespace` by the key `keyBlob` (what `ssh-keygen -Y
 * verify -n namespace` checks for one allowed signer). The key in the signature must be that key, byte for byte.
 */
export function verifySignature(armored: string, message: Buffer, namespace: string, keyBlob: Buffer): boolean {
  const sig = parseSignature(armored)
  if (!sig || sig.namespace !== namespace || !sig.publicKey.equals(keyBlob)) return false
  const raw = ed25519Raw(keyBlob)!
  return verify(null, signedData(namespace, sig.hash, message), keyObject(raw), sig.signature)
}
