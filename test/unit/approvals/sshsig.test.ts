// SSHSIG verification with node:crypto against real keys and signatures made by ssh-keygen at test time, both
// ways: what ssh-keygen signs verifies here, and ssh-keygen -Y verify accepts the same signature. Everything
// tampered, truncated, foreign or in another namespace is refused.
import { execFileSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  fingerprint,
  parseSignature,
  publicKeyBlob,
  publicKeyLine,
  verifySignature,
} from '../../../src/approvals/sshsig.js'
import { sshKeys, sshSign } from '../../support/ssh-keys.js'

const keys = sshKeys()
afterAll(() => keys.dispose())
const alice = keys.make('alice')
const mallory = keys.make('mallory')
const NS = 'agentcli-approval'
const message = Buffer.from('{"command":"delete","targets":[["1",1]]}')
const signed = sshSign(alice, message)
const blob = publicKeyBlob(alice.pub)!

/** The signature with one byte of its binary body flipped (at `offset` from the end), re-armored. */
function flip(armored: string, offsetFromEnd: number): string {
  const body = armored.split('\n').filter((l) => l && !l.startsWith('-----'))
  const bytes = Buffer.from(body.join(''), 'base64')
  bytes[bytes.length - offsetFromEnd]! ^= 1
  return `-----BEGIN SSH SIGNATURE-----\n${bytes.toString('base64')}\n-----END SSH SIGNATURE-----\n`
}

describe('SSH signatures', () => {
  it('verifies what ssh-keygen signed, and only with the signer key, message and namespace', () => {
    expect(verifySignature(signed, message, NS, blob)).toBe(true)
    expect(verifySignature(signed, Buffer.from(`${message} `), NS, blob)).toBe(false)
    expect(verifySignature(signed, message, 'other-namespace', blob)).toBe(false)
    expect(verifySignature(signed, message, NS, publicKeyBlob(mallory.pub)!)).toBe(false)
    expect(verifySignature(sshSign(alice, message, 'file'), message, NS, blob)).toBe(false)
  })

  it('is what ssh-keygen -Y verify accepts', () => {
    const dir = keys.dir
    writeFileSync(join(dir, 'allowed'), `alice ${alice.pub}\n`)
    writeFileSync(join(dir, 'sig'), signed)
    const out = execFileSync(
      'ssh-keygen',
      ['-Y', 'verify', '-f', join(dir, 'allowed'), '-I', 'alice', '-n', NS, '-s', join(dir, 'sig')],
      { input: message, stdio: ['pipe', 'pipe', 'pipe'] },
    ).toString()
    expect(out).toMatch(/Good "agentcli-approval" signature for alice/)
  })

  it('refuses a tampered signature byte and a signature whose embedded key was swapped', () => {
    expect(verifySignature(flip(signed, 1), message, NS, blob)).toBe(false)
    // A signature by mallory relabelled with alice's key does not verify under alice's key.
    const forged = sshSign(mallory, message)
    expect(verifySignature(forged, message, NS, blob)).toBe(false)
  })

  it('parses only one well-formed ed25519 SSHSIG', () => {
    expect(parseSignature(signed)).toMatchObject({ namespace: NS, hash: 'sha512' })
    expect(parseSignature('garbage')).toBeUndefined()
    expect(parseSignature('-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----')).toBeUndefined()
    const body = Buffer.from(signed.split('\n').slice(1, -2).join(''), 'base64')
    const arm = (b: Buffer) => `-----BEGIN SSH SIGNATURE-----\n${b.toString('base64')}\n-----END SSH SIGNATURE-----`
    expect(parseSignature(arm(body.subarray(0, body.length - 3)))).toBeUndefined()
    expect(parseSignature(arm(Buffer.concat([body, Buffer.from([0])])))).toBeUndefined()
    const v2 = Buffer.from(body)
    v2.writeUInt32BE(2, 6)
    expect(parseSignature(arm(v2))).toBeUndefined()
    const magic = Buffer.from(body)
    magic[0] = 0x58
    expect(parseSignature(arm(magic))).toBeUndefined()
    // The hash name: sha512 → sha999 (same length) is not one of the two allowed.
    expect(parseSignature(arm(Buffer.from(body.toString('latin1').replace('sha512', 'sha999'), 'latin1')))).toBe(
      undefined,
    )
    // The signature's algorithm name and the embedded key's type must both be ssh-ed25519.
    const last = body.toString('latin1').lastIndexOf('ssh-ed25519')
    const algo = Buffer.from(body)
    algo.write('ssh-ed25518', last, 'latin1')
    expect(parseSignature(arm(algo))).toBeUndefined()
    const keyType = Buffer.from(body)
    keyType.write('ssh-ed25518', body.toString('latin1').indexOf('ssh-ed25519'), 'latin1')
    expect(parseSignature(arm(keyType))).toBeUndefined()
  })

  it('reads ssh-ed25519 public key lines only, and fingerprints them as ssh-keygen does', () => {
    expect(publicKeyBlob('ssh-rsa AAAAB3NzaC1yc2E alice')).toBeUndefined()
    expect(publicKeyBlob('ssh-ed25519 !!!')).toBeUndefined()
    expect(publicKeyBlob('ssh-ed25519')).toBeUndefined()
    expect(publicKeyBlob('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==')).toBeUndefined()
    expect(publicKeyBlob('ssh-ed25519 AAAAB3NzaC1yc2EAAAAgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBe(
      undefined,
    )
    const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b])
    const trailing = Buffer.concat([str(Buffer.from('ssh-ed25519')), str(Buffer.alloc(32, 1)), Buffer.from([0])])
    expect(publicKeyBlob(`ssh-ed25519 ${trailing.toString('base64')}`)).toBeUndefined()
    const printed = execFileSync('ssh-keygen', ['-l', '-f', `${alice.path}.pub`]).toString()
    expect(printed).toContain(fingerprint(blob))
  })

  it('writes a node:crypto ed25519 key as the public key line ssh-keygen reads', () => {
    const line = publicKeyLine(generateKeyPairSync('ed25519').publicKey)
    const made = publicKeyBlob(line)
    expect(made).toBeDefined()
    const path = join(keys.dir, 'made.pub')
    writeFileSync(path, `${line} made\n`)
    expect(execFileSync('ssh-keygen', ['-l', '-f', path]).toString()).toContain(fingerprint(made!))
  })
})
