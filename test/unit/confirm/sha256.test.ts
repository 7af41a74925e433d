import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { equalBytes, hmacSha256, sha256Hex } from '../../../src/confirm/sha256.js'

const hex = (text: string) => Buffer.from(text, 'hex')

describe('sha256Hex', () => {
  it('gives the FIPS 180-2 digests', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    )
  })

  it('is node:crypto’s SHA-256 of the UTF-8 text, at every length around the block boundaries', () => {
    for (let n = 0; n < 200; n++) {
      const text = `é€𝄞${'x'.repeat(n)}`
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'))
    }
  })
})

describe('hmacSha256', () => {
  // RFC 4231, test cases 1, 2, 4, 6 and 7 (7 and 6: a key longer than the block).
  it.each([
    ['0b'.repeat(20), 'Hi There', 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
    [
      Buffer.from('Jefe').toString('hex'),
      'what do ya want for nothing?',
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    ],
    [
      'aa'.repeat(131),
      'Test Using Larger Than Block-Size Key - Hash Key First',
      '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    ],
    [
      'aa'.repeat(131),
      'This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.',
      '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
    ],
  ])('gives RFC 4231’s MAC for key %s', (key, data, mac) => {
    expect(hmacSha256(hex(key), data).toString('hex')).toBe(mac)
  })

  it('is node:crypto’s HMAC for any key and text, however keys are reused or interleaved', () => {
    const keys = [randomBytes(32), randomBytes(32), randomBytes(64), randomBytes(100), Buffer.alloc(0)]
    for (let round = 0; round < 3; round++)
      for (const key of keys)
        for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 200]) {
          const text = `part\0${'é'.repeat(n % 7)}${'y'.repeat(n)}`
          const mac = hmacSha256(key, text)
          expect(mac).toBeInstanceOf(Buffer)
          expect(mac.toString('hex')).toBe(createHmac('sha256', key).update(text).digest('hex'))
        }
  })

  it('keys by content, not by identity: a copy of a key gives the same MAC, another key another', () => {
    const key = randomBytes(32)
    const copy = Buffer.from(key)
    expect(hmacSha256(copy, 'm')).toEqual(hmacSha256(key, 'm'))
    const other = Buffer.from(key)
    other[0] = (other[0] as number) ^ 1
    expect(hmacSha256(other, 'm')).not.toEqual(hmacSha256(key, 'm'))
    // A key changed in place is a new key: its MAC follows its bytes, never the state made for the old ones.
    const before = hmacSha256(key, 'm')
    key[0] = (key[0] as number) ^ 1
    expect(hmacSha256(key, 'm')).toEqual(createHmac('sha256', key).update('m').digest())
    expect(hmacSha256(key, 'm')).not.toEqual(before)
  })
})

describe('equalBytes', () => {
  it('agrees with timingSafeEqual on equal bytes and on a difference at any position', () => {
    const a = randomBytes(32)
    expect(equalBytes(a, Buffer.from(a))).toBe(true)
    expect(equalBytes(Buffer.alloc(0), Buffer.alloc(0))).toBe(true)
    for (let i = 0; i < a.length; i++)
      for (const bit of [1, 0x80]) {
        const b = Buffer.from(a)
        b[i] = (b[i] as number) ^ bit
        expect(equalBytes(a, b)).toBe(false)
        expect(timingSafeEqual(a, b)).toBe(false)
      }
  })

  it('is false for different lengths, a prefix included', () => {
    const a = randomBytes(32)
    expect(equalBytes(a, a.subarray(0, 31))).toBe(false)
    expect(equalBytes(a.subarray(0, 31), a)).toBe(false)
    expect(equalBytes(a, Buffer.alloc(0))).toBe(false)
  })
})
