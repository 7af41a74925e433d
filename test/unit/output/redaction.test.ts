// In-process tests of the redactor: they carry the 100% coverage gate of src/output/redact*.ts. The command-level
// tests (every output surface of the real bin) are in test/redaction.test.ts.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { scrubArgv } from '../../../src/audit/argv.js'
import { Credentials } from '../../../src/credentials/credentials.js'
import { envSecretStore } from '../../../src/credentials/env-store.js'
import { fileSecretStore } from '../../../src/credentials/file-store.js'
import { registerRecord } from '../../../src/credentials/register.js'
import { writeJsonAtomic } from '../../../src/fs/json-file.js'
import {
  addSensitiveKeys,
  isSensitiveKey,
  mayNeedRedaction,
  normalizeKey,
  RawScrubber,
  REDACTED,
  redactAtRest,
  redactedJson,
  redactForOutput,
  redactString,
  registerSecret,
  resetRedaction,
  tokenLike,
} from '../../../src/output/redact.js'
import { keyFragments, keyVerdict } from '../../../src/output/redact-keys.js'
import { forgetSecrets, mayHoldSecret, replaceSecrets } from '../../../src/output/redact-secrets.js'
import { redactShapes } from '../../../src/output/redact-shapes.js'
import { prng } from '../../../src/verify/fuzz.js'

/** Seeded (mulberry32, the fuzzer's own): the property tests are reproducible and bounded. */
const rng = prng

const WORDS = (
  'basic token bearer secret password passwords passphrase authorization auth author cookie cookies session ' +
  'credential credentials key keys api private access refresh client bonds training plan economy review santa ' +
  'party reset team meeting budget quarterly report draft final ship release sprint backlog the a of for and ' +
  'with to in on at by from into over under after before new old big small first last next basic-training ' +
  'token-economy bearer-bonds secret-santa well-known follow-up e-mail Token Bearer Basic Secret Password ' +
  'Authorization: Cookie: github sk ghp xox AKIA eyJ npm hf asia Asia gh'
).split(' ')
const EXTRAS = ['2026', 'v2', 'q3', 'v1.2.3', '2026-01-02', '10:30', '42%', '$1,200', 'https://example.com/docs', '#12']
const PUNCT = ['', '', '', ',', '.', ':', ';', '!', '?', ' -', ' (', ')']

function prose(next: () => number): string {
  const n = 1 + Math.floor(next() * 12)
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const pool = next() < 0.85 ? WORDS : EXTRAS
    out.push(pool[Math.floor(next() * pool.length)]! + PUNCT[Math.floor(next() * PUNCT.length)]!)
  }
  return out.join(next() < 0.1 ? '\n' : ' ')
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
function randomToken(next: () => number, length: number, alphabet = ALNUM): string {
  let out = ''
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)]
  // A real token mixes letters and digits; force one of each so the shape is the one a tool would meet.
  return `${out}7q`
}

describe('credential shapes, never English words', () => {
  it('leaves everyday phrases with basic/token/bearer/secret/password words unchanged', () => {
    for (const text of [
      'basic training plan',
      'Basic training',
      'token economy review',
      'Token economy',
      'bearer bonds',
      'Bearer bonds-and-stocks',
      'secret santa party',
      'password reset for the team',
      'Authorization: pending review by finance',
      'Bearer 2nd-quarter-2026-review',
      'cookie: chocolate chip',
      'sk-learn-tutorial-for-beginners',
      'see https://example.com/docs?page=2',
      'Basic plan',
      'a basic A+ grade',
      'session: 3 of 5, password: see the wiki',
    ])
      expect(redactString(text)).toBe(text)
  })

  it('property: random realistic prose and records round-trip unchanged (seeded, 3000 cases)', () => {
    const next = rng(12)
    for (let i = 0; i < 3000; i++) {
      const text = prose(next)
      expect(redactString(text)).toBe(text)
      const record = {
        id: String(i),
        title: prose(next),
        note: prose(next),
        tags: [prose(next), prose(next)],
        meta: { description: prose(next), status: next() < 0.5 ? 'open' : 'done', count: i },
      }
      expect(redactForOutput(record)).toEqual(record)
      expect(redactedJson(record)).toBe(JSON.stringify(record))
    }
  })

  it('property: known credential shapes in prose are redacted (seeded, 1000 cases)', () => {
    const next = rng(34)
    const shapes: Array<(t: string) => [string, string]> = [
      (t) => [`Bearer ${t}`, t],
      (t) => [`token ${t}`, t],
      (t) => [`Authorization: Bearer ${t}`, t],
      (t) => [`authorization=${t}`, t],
      (t) => [`ghp_${t}`, `ghp_${t}`],
      (t) => [`github_pat_${t}_${t}`, `github_pat_${t}`],
      (t) => [`sk-${t}`, `sk-${t}`],
      (t) => [`sk-proj-${t}`, t],
      (t) => [`xoxb-1234-${t}`, t],
      (t) => [`sk_live_${t}`, t],
      (t) => [`glpat-${t}`, t],
      (t) => [`npm_${t}${t}`, t],
      (t) => [`hf_${t}${t}`, t],
      (t) => [`https://ann:${t}@db.example/x`, t],
      (t) => [`https://${t}@github.com/o/r.git`, t],
      (t) => [`https://example.com/cb?access_token=${t}&state=1`, t],
      (t) => [`grant_type=refresh_token&refresh_token=${t}`, t],
      (t) => [`{"client_secret":"${t}","ok":true}`, t],
      (t) => [`{"error":"bad","detail":"{\\"password\\":\\"${t}\\"}"}`, t],
      (t) => [`{"token":"${t}`, t],
      (t) => [`X-Api-Key: ${t}`, t],
      (t) => [`Cookie: sid=${t}; theme=dark`, t],
      (t) => [`eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${t}`, `eyJzdWIiOiIxMjM0NTY3ODkwIn0.${t}`],
      (t) => [`-----BEGIN PRIVATE KEY-----\n${t}\n-----END PRIVATE KEY-----`, t],
    ]
    for (let i = 0; i < 1000; i++) {
      const token = randomToken(next, 20 + Math.floor(next() * 20))
      const [shape, secret] = shapes[i % shapes.length]!(token)
      const text = `${prose(next)} ${shape} ${prose(next)}`
      const out = redactString(text)
      expect(out, text).not.toContain(secret)
      expect(out).toContain(REDACTED)
      expect(redactedJson({ note: text })).not.toContain(secret)
    }
  })

  it('recognises fixed-format keys and Basic credentials by their shape', () => {
    const basic = Buffer.from('ann:hunter2').toString('base64')
    expect(redactString(`Basic ${basic}`)).toBe(`Basic ${REDACTED}`)
    expect(redactString('AKIAIOSFODNN7EXAMPLE')).toBe(REDACTED)
    expect(redactString(`AIza${'a1'.repeat(17)}b`)).toBe(REDACTED)
    expect(redactString('whsec_abcdefghijklmnop1234')).toBe(REDACTED)
    // The same prefixes on something that is not a key stay: no digit, or too regular to be random.
    expect(redactString('xoxb-abcdefghijklmnop')).toBe('xoxb-abcdefghijklmnop')
    expect(redactString('-----BEGIN RSA PRIVATE KEY-----\nMIIB')).toBe(REDACTED)
    expect(redactString('Authorization: abcdef0123456789abcdef')).toBe(`Authorization: ${REDACTED}`)
    expect(redactString('Authorization: Bearer AbCdEfGhIj')).toBe(`Authorization: Bearer ${REDACTED}`)
    expect(redactString('Authorization: Bearer abcdefghij')).toBe('Authorization: Bearer abcdefghij')
    expect(redactString('Authorization: Bearer bonds')).toBe('Authorization: Bearer bonds')
    expect(redactString('authorization: Token abc123.def')).toBe(`authorization: Token ${REDACTED}`)
    expect(redactString('Authorization: abcdef0123456789abcdef more')).toBe(`Authorization: ${REDACTED} more`)
    expect(redactString('postgres://ann:@db')).toBe('postgres://ann:@db')
    expect(redactString('https://ann@example.com')).toBe('https://ann@example.com')
    expect(redactString('a=1&%E0%A4%A=2&password=x')).toBe(`a=1&%E0%A4%A=2&password=${REDACTED}`)
    expect(redactString('"note": "token of thanks"')).toBe('"note": "token of thanks"')
    expect(redactString('"pin_code": 1234, "password": 5678')).toBe(`"pin_code": 1234, "password": "${REDACTED}"`)
    expect(redactString('X-Request-Id: abcdef0123456789abcdef')).toBe('X-Request-Id: abcdef0123456789abcdef')
  })

  it('tokenLike: long, letters mixed with digits, or random-looking mixed case', () => {
    expect(tokenLike('short1')).toBe(false)
    expect(tokenLike('canary-9f8e7d6c5b4a3210')).toBe(true)
    expect(tokenLike('aBcDeFgHiJkLmNoPqRsTuV')).toBe(true)
    expect(tokenLike('BondsPortfolioReviewPlanned')).toBe(false)
    expect(tokenLike('well-known-follow-up-words')).toBe(false)
    expect(redactShapes('Basic abc')).toBe('Basic abc')
    expect(redactShapes('Basic abcde')).toBe('Basic abcde')
    expect(redactShapes(`Basic ${Buffer.from(':').toString('base64')}`)).toBe('Basic Og==')
  })
})

describe('sensitive keys, in any style, hide their whole value', () => {
  it('normalises key styles before matching', () => {
    expect(normalizeKey('accessToken')).toBe('access_token')
    expect(normalizeKey('APIKey')).toBe('api_key')
    expect(normalizeKey('X-Api-Key')).toBe('x_api_key')
    expect(normalizeKey('--DB_PASSWORD2')).toBe('db_password')
    for (const key of [
      'accessToken',
      'refresh-token',
      'clientSecret',
      'dbPassword',
      'X-Api-Key',
      'Set-Cookie',
      'AWS_SECRET_ACCESS_KEY',
      'password2',
      'privateKey',
      'sessionId',
      'Authorization',
      'deviceCode',
      'authorization_code',
    ])
      expect(isSensitiveKey(key), key).toBe(true)
    for (const key of [
      'title',
      'user_code',
      'confirm_token',
      'confirmToken',
      'token_id',
      'tokens',
      'author',
      '--password',
      'keys',
    ])
      expect(isSensitiveKey(key), key).toBe(false)
    expect(keyVerdict('credentials')).toBe('container')
  })

  it('redacts nested objects and arrays under a sensitive key; keeps booleans and nulls', () => {
    const input = {
      accessToken: 'a',
      config: { clientSecret: { id: 'x', value: 'y' }, dbPassword: ['p', 'q'], port: 5432, pin: null },
      'X-Api-Key': 12345,
      headers: [{ 'Set-Cookie': 'sid=1' }],
      credentials: { configured: true, token: 'zz', note: 'n' },
      credential: 'user:pass',
      password: null,
      token: true,
      gone: undefined,
      secret: undefined,
    }
    expect(redactForOutput(input)).toEqual({
      accessToken: REDACTED,
      config: { clientSecret: REDACTED, dbPassword: REDACTED, port: 5432, pin: null },
      'X-Api-Key': REDACTED,
      headers: [{ 'Set-Cookie': REDACTED }],
      credentials: { configured: true, token: REDACTED, note: 'n' },
      credential: REDACTED,
      password: null,
      token: true,
      gone: undefined,
      secret: undefined,
    })
    expect(redactAtRest).toBe(redactForOutput)
  })

  it('keeps a JSON Schema that describes a sensitive property (reference), but not a value shaped like one', () => {
    const schema = { type: 'object', properties: { password: { type: 'string', description: 'the pw' } } }
    expect(redactForOutput(schema)).toEqual(schema)
    expect(redactForOutput({ properties: { password: 'x', token: [] } })).toEqual({
      properties: { password: REDACTED, token: REDACTED },
    })
    expect(redactForOutput({ password: { type: 'string' } })).toEqual({ password: REDACTED })
    expect(redactForOutput({ properties: { token: {} } })).toEqual({ properties: { token: REDACTED } })
  })

  it('tool-declared keys are matched in any style too', () => {
    addSensitiveKeys(['ssn', '---', 'x_national_number'])
    expect(redactForOutput({ SSN: '123', nationalNumber: 7, xNationalNumber: 8 })).toEqual({
      SSN: REDACTED,
      nationalNumber: 7,
      xNationalNumber: REDACTED,
    })
    expect(keyFragments()).toContain('national')
    expect(mayNeedRedaction('{"xNationalNumber":1}')).toBe(true)
  })

  it('remembers verdicts within a bound', () => {
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`item_${i}`, 'x']))
    expect(Object.values(redactForOutput(many)).every((v) => v === 'x')).toBe(true)
    expect(redactForOutput({ api_key: 'k' })).toEqual({ api_key: REDACTED })
  })
})

describe('strings: embedded JSON and form bodies', () => {
  it('parses JSON text inside a string, redacts it, and re-serialises only when it changed', () => {
    const body = JSON.stringify({ error: 'invalid_grant', refresh_token: 'rt_123456', hint: 'token economy' })
    expect(JSON.parse(redactString(body))).toEqual({
      error: 'invalid_grant',
      refresh_token: REDACTED,
      hint: 'token economy',
    })
    const clean = '{ "error" : "token expired" }'
    expect(redactString(clean)).toBe(clean)
    expect(redactString('[{"password":"x"}]')).toBe(`[{"password":"${REDACTED}"}]`)
    expect(redactString('before {"token":"abcdefg"} after Bearer abc0123456789xyzw')).toBe(
      `before {"token":"${REDACTED}"} after Bearer ${REDACTED}`,
    )
    expect(redactString('token } then { no json')).toBe('token } then { no json')
    expect(redactString('{token: unquoted}')).toBe('{token: unquoted}')
    const huge = `{"token":"${'x'.repeat(300 * 1024)}"`
    expect(redactString(huge)).toBe(`{"token":"${REDACTED}"`)
  })

  it('follows JSON nested in JSON strings to a bounded depth', () => {
    let text = JSON.stringify({ password: 'deep-secret' })
    for (let i = 0; i < 10; i++) text = JSON.stringify({ wrapped: text })
    const out = redactString(text)
    expect(out).not.toContain('deep-secret')
  })

  it('scrubs keys that are themselves secrets, and Dates as their JSON', () => {
    const key = `ghp_${'a1'.repeat(15)}`
    expect(redactForOutput({ [key]: 1, at: new Date(0) })).toEqual({ [REDACTED]: 1, at: '1970-01-01T00:00:00.000Z' })
    expect(redactForOutput({ [key]: 2 })).toEqual({ [REDACTED]: 2 })
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))
    expect(Object.keys(redactForOutput(many))).toHaveLength(5000)
  })

  it('judges prose deep in a document like prose at the top', () => {
    let deep: unknown = { note: 'token economy review', body: '{"hint":"basic training"}' }
    for (let i = 0; i < 20; i++) deep = { a: deep }
    expect(redactForOutput(deep)).toEqual(deep)
  })

  it('stops at a depth bound rather than recursing without end', () => {
    let deep: unknown = 'leaf'
    for (let i = 0; i < 70; i++) deep = { a: deep }
    expect(JSON.stringify(redactForOutput(deep))).toContain(REDACTED)
  })
})

describe('the prefilter', () => {
  it('agrees with the full path: whatever the walk would change, the prefilter flags', () => {
    // Keys spelled with non-ASCII look-alikes are not sensitive (the literal words could not see them).
    expect(isSensitiveKey('to\u212Aen')).toBe(false)
    expect(isSensitiveKey('ap\u0130_key')).toBe(false)
    registerSecret('lone\ud800surrogate-secret')
    const doc = { note: 'x lone\ud800surrogate-secret y' }
    expect(mayNeedRedaction(JSON.stringify(doc))).toBe(true)
    expect(redactedJson(doc)).toBe(JSON.stringify({ note: `x ${REDACTED} y` }))
    const next = rng(56)
    for (let i = 0; i < 500; i++) {
      const record = { title: prose(next), [prose(next).split(' ')[0]!]: prose(next) }
      const line = JSON.stringify(record)
      if (!mayNeedRedaction(line)) expect(JSON.stringify(redactForOutput(record))).toBe(line)
    }
  })

  it('proves clean documents clean with one JSON.stringify', () => {
    expect(mayNeedRedaction('{"i":1,"label":"item 1"}')).toBe(false)
    expect(mayNeedRedaction('{"note":"a token"}')).toBe(true)
    expect(mayNeedRedaction('{"k":"tOKen"}')).toBe(true)
    // Escaped JSON text: `\/` and `\u` force the full path, where the text is parsed.
    expect(mayNeedRedaction('"http:\\/\\/h"')).toBe(true)
    expect(redactedJson({ i: 1 })).toBe('{"i":1}')
    expect(redactedJson({ password: 'x' }, 2)).toBe(`{\n  "password": "${REDACTED}"\n}`)
    expect(redactedJson(undefined)).toBeUndefined()
    const escaped = JSON.stringify({ body: '{"url":"https:\\/\\/ann:pw1234@h"}' })
    expect(redactedJson(JSON.parse(escaped))).not.toContain('pw1234')
  })

  it('counts before it copies: a suspected document with nothing to hide is its one JSON.stringify, the rest redacted as by the copy', () => {
    // `token` in prose makes the prefilter suspect the whole document; nothing in it is a secret.
    const clean = {
      commands: Array.from({ length: 50 }, (_, i) => ({
        path: `item${i}`,
        description: 'Reads a token count.',
        when: new Date(0),
        flags: [{ name: 'limit', default: 10, hidden: false, note: null }],
        schema: { properties: { token: { type: 'string' } } },
      })),
    }
    const text = JSON.stringify(clean)
    expect(mayNeedRedaction(text)).toBe(true)
    expect(redactedJson(clean)).toBe(text)
    // Each kind of change the walk makes, found by the count and done by the copy, as redactForOutput does it.
    let deep: Record<string, unknown> = { leaf: 'token' }
    for (let i = 0; i < 70; i++) deep = { next: deep }
    for (const doc of [
      { list: ['a token', { password: 'hunter22' }] },
      { at: { toJSON: () => ({ api_key: 'k-123' }) } },
      { deep },
      { headers: { authorization: 'Bearer abcdefghijklmnop' } },
      { secret: undefined, note: 'token' },
    ])
      expect(redactedJson(doc)).toBe(JSON.stringify(redactForOutput(doc)))
    expect(redactedJson({ list: ['a token', { password: 'hunter22' }] })).not.toContain('hunter22')
  })
})

describe('secrets the process registered', () => {
  it('are scrubbed from strings, keys and JSON at any depth of escaping', () => {
    registerSecret(undefined)
    registerSecret(null)
    registerSecret('short')
    registerSecret('canary-Zq1Zq1Zq1')
    registerSecret('canary-Zq1Zq1Zq1')
    registerSecret('canary-Zq1Zq1Zq1-longer')
    expect(redactString('echo canary-Zq1Zq1Zq1-longer and canary-Zq1Zq1Zq1')).toBe(`echo ${REDACTED} and ${REDACTED}`)
    registerSecret('pw"with/quote')
    const twice = JSON.stringify({ body: JSON.stringify({ echoed: 'pw"with/quote' }) })
    expect(mayHoldSecret(twice)).toBe(true)
    expect(redactedJson(JSON.parse(twice))).not.toContain('with/quote')
    expect(replaceSecrets('nothing here')).toBe('nothing here')
    expect(mayHoldSecret('nothing here')).toBe(false)
  })

  it('are scrubbed from raw bytes, also across chunk boundaries, and binary stays binary', () => {
    const scrubber = new RawScrubber()
    const parts = [
      scrubber.push('id,title\n1,canary-Zq1Z'),
      scrubber.push(Buffer.from('q1Zq1\n2,ok\n')),
      scrubber.end(),
    ]
    expect(Buffer.concat(parts).toString()).toBe(`id,title\n1,${REDACTED}\n2,ok\n`)
    const binary = new Uint8Array([0, 255, 1, 254])
    const raw = new RawScrubber()
    expect([...Buffer.concat([raw.push(binary), raw.end()])]).toEqual([0, 255, 1, 254])
  })

  it('raw output passes untouched while nothing is registered', () => {
    forgetSecrets()
    const scrubber = new RawScrubber()
    const bytes = scrubber.push('plain,csv\n')
    expect(bytes.toString()).toBe('plain,csv\n')
    expect(scrubber.end()).toHaveLength(0)
  })

  it('a secret with no long literal run makes every text take the full path', () => {
    registerSecret('a"b"c"d"e"f')
    expect(mayHoldSecret('anything')).toBe(true)
    expect(redactString('x a"b"c"d"e"f y')).toBe(`x ${REDACTED} y`)
    forgetSecrets()
    expect(mayHoldSecret('anything')).toBe(false)
  })

  it('a new run in the process forgets the secrets and tool keys of the one before (resetRedaction)', () => {
    registerSecret('run-one-secret-42')
    addSensitiveKeys(['pin_code'])
    const before = redactForOutput({ pin_code: '1234', note: 'has run-one-secret-42' })
    expect(before).toEqual({ pin_code: REDACTED, note: `has ${REDACTED}` })
    resetRedaction()
    expect(redactForOutput({ pin_code: '1234', note: 'has run-one-secret-42' })).toEqual({
      pin_code: '1234',
      note: 'has run-one-secret-42',
    })
    expect(isSensitiveKey('pin_code')).toBe(false)
    // The built-in rules stay: they are not the run's.
    expect(isSensitiveKey('password')).toBe(true)
  })

  it('runs that declare the same keys reuse their prefilter; each run still flags only its own keys', () => {
    // More key sets than are kept (8), in turn, twice: a kept prefilter is the one of its own keys.
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet']
    const key = (i: number) => `${names[i % names.length]}qx`
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < names.length; i++) {
        resetRedaction()
        addSensitiveKeys([key(i)])
        // The same keys declared again change nothing.
        addSensitiveKeys([key(i)])
        expect(mayNeedRedaction(`{"${key(i)}":"v"}`)).toBe(true)
        expect(mayNeedRedaction(`{"${key(i + 1)}":"v"}`)).toBe(false)
        expect(redactForOutput({ [key(i)]: 'v' })).toEqual({ [key(i)]: REDACTED })
      }
    // A secret's runs are in the prefilter while it is known, and gone with it.
    resetRedaction()
    registerSecret('zqvwxy-81723')
    expect(mayNeedRedaction('x zqvwxy-81723')).toBe(true)
    resetRedaction()
    expect(mayNeedRedaction('x zqvwxy-81723')).toBe(false)
  })
})

describe('argv, for records of a command line', () => {
  it('never keeps the value of a flag that names a secret', () => {
    expect(
      scrubArgv([
        'create',
        '--title',
        'basic training',
        '--password',
        'hunter2',
        '--api-key=sk-1',
        '--token',
        '--quiet',
        '--client-secret',
        'Bearer abcdef0123456789xyzw',
        'ghp_' + 'a1'.repeat(15),
        '--secret',
      ]),
    ).toEqual([
      'create',
      '--title',
      'basic training',
      '--password',
      REDACTED,
      `--api-key=${REDACTED}`,
      '--token',
      '--quiet',
      '--client-secret',
      REDACTED,
      REDACTED,
      '--secret',
    ])
  })
})

describe('every store registers what it reads or saves', () => {
  const dirs: string[] = []
  const temp = () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-redact-'))
    dirs.push(dir)
    return dir
  }
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })
  const record = (token: string) => ({
    account: 'ann',
    access_token: token,
    refresh_token: `${token}-rt`,
    expires_at: null,
    scopes: [],
  })
  const options = (configDir: string, mode: 'auto' | 'file') => ({
    bin: 'redacttool',
    configDir,
    mode,
    refreshable: true,
    warn: () => {},
  })

  it('env: the injected token, as soon as the store exists', () => {
    envSecretStore('REDACTTOOL_TOKEN', 'canary-env-1a2b3c', 'env')
    expect(redactString('echo canary-env-1a2b3c')).toBe(`echo ${REDACTED}`)
  })

  it('keychain: a record read through Credentials, whichever store answered', async () => {
    const creds = new Credentials(options(temp(), 'auto'))
    await writeJsonAtomic(join(configDirOf(creds), 'session.json'), { account: 'ann' })
    ;(creds.keychain as { get: (a: string) => Promise<unknown> }).get = async () => record('canary-kc-4d5e6f')
    expect((await creds.read())?.source).toBe('keychain')
    expect(redactString('canary-kc-4d5e6f and canary-kc-4d5e6f-rt')).toBe(`${REDACTED} and ${REDACTED}`)
  })

  it('file: a record saved (a refreshed token) is registered before it is written, and on read', async () => {
    const dir = temp()
    const creds = new Credentials(options(dir, 'file'))
    await creds.save(record('canary-file-7a8b9c'))
    expect(redactString('x canary-file-7a8b9c-rt')).toBe(`x ${REDACTED}`)
    await fileSecretStore(dir).set({ ...record('canary-set-0d1e2f'), account: 'bob' })
    expect(redactString('canary-set-0d1e2f')).toBe(REDACTED)
    forgetSecrets()
    expect((await new Credentials(options(dir, 'file')).read())?.source).toBe('file')
    expect(redactString('canary-file-7a8b9c')).toBe(REDACTED)
  })

  it('registerRecord tolerates a record without a refresh token', () => {
    registerRecord({ access_token: 'canary-only-access', refresh_token: null })
    registerRecord(undefined)
    expect(redactString('canary-only-access')).toBe(REDACTED)
  })
})

function configDirOf(creds: Credentials): string {
  return (creds as unknown as { options: { configDir: string } }).options.configDir
}

// Redaction happens at the choke points only: who may import the redactor and the stdout writer is a rule of the
// import graph (.dependency-cruiser.mjs: redactor-at-choke-points, stdout-through-renderer), checked by `npm run
// check` and shown failing in test/import-graph.unit.test.ts.
