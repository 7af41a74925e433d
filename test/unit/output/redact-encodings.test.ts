// Adversarial, in-process tests of registered secrets in the forms an upstream carries them: base64 (standard and
// URL-safe, padded or not, at every alignment inside a larger blob), percent-encoding (URI component, form, path
// style, either case of hex), hex, and a secret split over two sibling fields. Each case also holds the prefilter
// to the full path: whatever would be redacted, `mayNeedRedaction` flags.
import { afterEach, describe, expect, it } from 'vitest'
import {
  mayNeedRedaction,
  RawScrubber,
  REDACTED,
  redactedJson,
  redactForOutput,
  redactString,
  registerSecret,
} from '../../../src/output/redact.js'
import { encodedForms } from '../../../src/output/redact-encodings.js'
import { forgetSecrets, mayHoldSecret } from '../../../src/output/redact-secrets.js'
import { prng } from '../../../src/verify/fuzz.js'

afterEach(() => forgetSecrets())

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64')
const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url')
const unpad = (s: string) => s.replace(/=+$/, '')
const hex = (s: string) => Buffer.from(s).toString('hex')

/** A document as an upstream error body would carry it, checked on both paths and by the prefilter. */
function expectHidden(carried: string, secret: string): void {
  const doc = { error: { message: 'rejected', echoed: `got ${carried} from you` } }
  const text = JSON.stringify(doc)
  expect(mayNeedRedaction(text)).toBe(true)
  const out = redactedJson(doc)
  expect(out).toBe(JSON.stringify(redactForOutput(doc)))
  expect(out).toContain(REDACTED)
  expect(out).not.toContain(carried)
  expect(out).not.toContain(secret)
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const MIXED = `${ALNUM}-_.~+/=:@!*() `
function token(next: () => number, length: number, alphabet = ALNUM): string {
  let out = ''
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)]
  return out
}

describe('base64', () => {
  const SECRET = 'tk_live_9f8e7d6c5b4a'
  it('standard and URL-safe, with and without padding', () => {
    registerSecret(SECRET)
    const forms = [b64(SECRET), unpad(b64(SECRET)), b64url(SECRET), `${b64url(SECRET)}=`]
    for (const form of forms) expectHidden(form, SECRET)
    // The whole form goes, padding included.
    expect(redactString(`x ${b64(SECRET)} y`)).toBe(`x ${REDACTED} y`)
  })

  it('inside a larger blob at each of the three byte alignments (a Basic `user:secret` credential)', () => {
    registerSecret(SECRET)
    for (const user of ['a', 'ab', 'abc', 'user', 'admin', 'service-account'])
      for (const tail of ['', '!', '\n', ':x']) {
        const blob = Buffer.from(`${user}:${SECRET}${tail}`)
        for (const carried of [b64(blob), b64url(blob), unpad(b64(blob))]) {
          expectHidden(carried, SECRET)
          // What is left of the blob around the mark decodes to no more than the secret's edges.
          const left = redactString(carried).split(REDACTED)
          expect(left).toHaveLength(2)
          for (const piece of left) expect(Buffer.from(piece, 'base64').toString('latin1')).not.toContain('9f8e')
        }
      }
  })

  it('property: random secrets in random blobs, every alignment, both alphabets (seeded, 600 cases)', () => {
    const next = prng(71)
    for (let i = 0; i < 600; i++) {
      forgetSecrets()
      const secret = token(next, 6 + Math.floor(next() * 30), MIXED)
      registerSecret(secret)
      const blob = Buffer.concat([
        Buffer.from(token(next, Math.floor(next() * 7))),
        Buffer.from(secret),
        Buffer.from(token(next, Math.floor(next() * 7))),
      ])
      const carried = next() < 0.5 ? b64(blob) : b64url(blob)
      expect(mayNeedRedaction(JSON.stringify({ body: carried }))).toBe(true)
      expect(redactString(carried)).toContain(REDACTED)
    }
  })

  it('a secret whose base64 has no long literal run makes every text take the full path', () => {
    // U+FFFF is EF BF BF in UTF-8, `77+/` in base64: no run of four without `+` or `/`.
    const secret = '\uffff'.repeat(6)
    registerSecret(secret)
    expect(mayHoldSecret('anything')).toBe(true)
    expect(redactString(`x ${b64(secret)} y`)).toBe(`x ${REDACTED} y`)
  })
})

describe('percent-encoding', () => {
  const SECRET = 'p@ss w/rd+Zq9!~*(x)'
  it('URI component, form (+ for a space), path style (/ kept), upper- and lower-case hex', () => {
    registerSecret(SECRET)
    const component = encodeURIComponent(SECRET)
    const form = new URLSearchParams({ v: SECRET }).toString().slice(2)
    const path = component.replace(/%2F/g, '/')
    const lower = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())
    expect(form).toContain('+')
    for (const carried of [component, form, path, lower(component), lower(form), lower(path)]) {
      expectHidden(carried, SECRET)
      expectHidden(`https://api.example/cb?q=${carried}&page=2`, SECRET)
    }
  })

  it('a secret of symbols with no long literal part is found through `%`', () => {
    const secret = 'a!b@c#d$e%f^'
    registerSecret(secret)
    expectHidden(encodeURIComponent(secret), secret)
  })

  it('a lone surrogate has no percent form; its other forms are still registered', () => {
    const secret = 'lone\ud800surrogate'
    expect(() => encodeURIComponent(secret)).toThrow()
    registerSecret(secret)
    expect(redactString(`x ${secret} y`)).toBe(`x ${REDACTED} y`)
    expect(encodedForms(secret, 6).some((f) => f.form.includes('%'))).toBe(false)
  })
})

describe('hex', () => {
  it('lower and upper case, alone or inside a longer hex dump', () => {
    const secret = 'hunter2-Zq9x'
    registerSecret(secret)
    for (const carried of [hex(secret), hex(secret).toUpperCase(), `00ff${hex(secret)}0a0d`])
      expectHidden(carried, secret)
  })

  it('raw output too, across a chunk boundary', () => {
    const secret = 'hunter2-Zq9x'
    registerSecret(secret)
    const form = hex(secret)
    const scrubber = new RawScrubber()
    const parts = [scrubber.push(`dump ${form.slice(0, 7)}`), scrubber.push(`${form.slice(7)} end`), scrubber.end()]
    expect(Buffer.concat(parts).toString()).toBe(`dump ${REDACTED} end`)
  })
})

describe('encoded forms are computed once, and none is trivial', () => {
  it('every form is at least the minimum length and differs from the secret; short blobs are left out', () => {
    for (const secret of ['abcdef', 'tk_9f8e7d6c', 'p@ss w/rd']) {
      const forms = encodedForms(secret, 6)
      expect(forms.length).toBeGreaterThan(0)
      for (const { form } of forms) {
        expect(form.length).toBeGreaterThanOrEqual(6)
        expect(form).not.toBe(secret)
      }
      expect(new Set(forms.map((f) => f.form)).size).toBe(forms.length)
    }
    // A core shorter than the minimum is not a form.
    expect(encodedForms('abcdef', 9).map((f) => f.form)).not.toContain('YmNkZW')
  })

  it('a 6-character secret leaves ordinary words and its own pieces alone', () => {
    registerSecret('abcdef')
    for (const text of ['abc', 'def', 'abc def', 'YWJj', 'the alphabet', '616263', 'abc%64ef']) {
      expect(redactString(text)).toBe(text)
      expect(redactedJson({ note: text })).toBe(JSON.stringify({ note: text }))
    }
  })

  it('short values are still ignored, and registering twice adds nothing', () => {
    registerSecret('short')
    expect(mayHoldSecret(b64('short'))).toBe(false)
    registerSecret('tk_9f8e7d6c')
    registerSecret('tk_9f8e7d6c')
    expect(redactString(b64('tk_9f8e7d6c'))).toBe(REDACTED)
  })
})

describe('a secret split over two sibling values', () => {
  const SECRET = 'tk9Secret-Zq4w'
  it('adjacent string values, in either order, in objects and arrays: both hidden whole', () => {
    registerSecret(SECRET)
    for (const doc of [
      { a: 'tk9Sec', b: 'ret-Zq4w' },
      { token_part1: 'tk9Secret', token_part2: '-Zq4w', status: 401 },
      { b: 'ret-Zq4w', a: 'tk9Sec' },
      { a: 'tk9Sec', n: 1, flag: true, b: 'ret-Zq4w' },
      { parts: ['x', 'tk9S', 'ecret-Zq4w', 'y'] },
      { a: 'echoed: tk9Sec', b: 'ret-Zq4w (truncated)' },
      { body: JSON.stringify({ first: 'tk9Secr', second: 'et-Zq4w' }) },
    ]) {
      const text = JSON.stringify(doc)
      expect(mayNeedRedaction(text)).toBe(true)
      const out = redactedJson(doc)
      expect(out).toBe(JSON.stringify(redactForOutput(doc)))
      expect(out).not.toBe(text)
      for (const piece of ['tk9Sec', 'ret-Zq4w', 'ecret-Zq4w', 'et-Zq4w', '-Zq4w']) expect(out).not.toContain(piece)
    }
    expect(redactForOutput({ a: 'tk9Sec', b: 'ret-Zq4w', c: 'kept' })).toEqual({ a: REDACTED, b: REDACTED, c: 'kept' })
    expect(redactForOutput(['x', 'tk9S', 'ecret-Zq4w'])).toEqual(['x', REDACTED, REDACTED])
  })

  it('is bounded: a lone fragment, pieces that do not complete it, or pieces in different objects stay', () => {
    registerSecret(SECRET)
    for (const doc of [
      { a: 'tk9Sec', b: 'other' },
      { a: 'tk9Sec' },
      { a: 'tk9Sec', b: 'ret-Zq' },
      { a: 'ret-Zq4w', b: 'tk9Sec-' },
      { x: { a: 'tk9Sec' }, y: { b: 'ret-Zq4w' } },
      { a: 'tk', b: '9S' },
      { a: 'tk9Sec', b: `${'x'.repeat(20)}w` },
      { a: `tk9${'x'.repeat(20)}`, b: 'ret-Zq4w' },
      { a: '', b: 'tk9Secret-Zq4' },
    ])
      expect(redactedJson(doc)).toBe(JSON.stringify(doc))
  })

  it('property: random tokens cut at any point into two adjacent fields (seeded, 400 cases)', () => {
    const next = prng(72)
    for (let i = 0; i < 400; i++) {
      forgetSecrets()
      const secret = token(next, 6 + Math.floor(next() * 34), MIXED)
      registerSecret(secret)
      const cut = 1 + Math.floor(next() * (secret.length - 1))
      const doc = { id: i, first: secret.slice(0, cut), second: secret.slice(cut), note: 'kept' }
      expect(mayNeedRedaction(JSON.stringify(doc))).toBe(true)
      expect(redactForOutput(doc)).toEqual({ id: i, first: REDACTED, second: REDACTED, note: 'kept' })
    }
  })
})

describe('the prefilter folds the runs of secrets into its one expression', () => {
  it('ignores case for ASCII runs and keeps others as they are (İ lower-cases to two characters)', () => {
    const secret = 'İİİİ-ß-Zq9xÅÅÅ'
    registerSecret(secret)
    for (const carried of [secret, hex(secret).toUpperCase(), b64(secret)]) expectHidden(carried, secret)
    expect(mayNeedRedaction(JSON.stringify({ a: 'İİİİ-ß-', b: 'Zq9xÅÅÅ' }))).toBe(true)
    expect(mayNeedRedaction(JSON.stringify({ note: 'plain words' }))).toBe(false)
  })

  it('is rebuilt when a secret is registered, and forgets it when cleared', () => {
    const text = JSON.stringify({ note: b64('tk_live_9f8e7d6c5b4a') })
    expect(mayNeedRedaction(text)).toBe(false)
    registerSecret('tk_live_9f8e7d6c5b4a')
    expect(mayNeedRedaction(text)).toBe(true)
    forgetSecrets()
    expect(mayNeedRedaction(text)).toBe(false)
  })
})
