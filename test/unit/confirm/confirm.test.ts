import { createHmac } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { auditPath } from '../../../src/audit/record.js'
import { appendAudit } from '../../../src/audit/writer.js'
import { canonicalJson } from '../../../src/confirm/canonical.js'
import { fileIdempotencyLedger, idempotencyScope, keyReused } from '../../../src/confirm/idempotency.js'
import { fileTokenLedger, prune } from '../../../src/confirm/ledger.js'
import { batchSchema, dryRunSchema } from '../../../src/confirm/preview.js'
import { envSecretSource, fileSecretSource } from '../../../src/confirm/secret.js'
import { goneDrift, sameTargets, type Target, targetDrift } from '../../../src/confirm/targets.js'
import {
  type Binding,
  MAX_TOKEN_CHARS,
  mintToken,
  tokenKeyId,
  verifyTargets,
  verifyToken,
} from '../../../src/confirm/token.js'
import { beforeChange, isBeforeChange } from '../../../src/errors/before-change.js'
import { loadZod } from '../../../src/schema/output.js'

// Root ignores file permissions, so the few I/O failures it cannot cause for real are injected here.
const fail = vi.hoisted(() => ({
  link: undefined as string | undefined,
  open: undefined as string | undefined,
  write: undefined as string | undefined,
  rm: undefined as string | undefined,
}))
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>()
  const injected = (code: string) => Promise.reject(Object.assign(new Error(code), { code }))
  return {
    ...real,
    link: (...a: Parameters<typeof real.link>) => (fail.link ? injected(fail.link) : real.link(...a)),
    rm: (...a: Parameters<typeof real.rm>) => (fail.rm ? injected(fail.rm) : real.rm(...a)),
  }
})
// The token ledger's marker is created and written with synchronous calls.
vi.mock('node:fs', async (original) => {
  const real = await original<typeof import('node:fs')>()
  const thrown = (code: string) => {
    throw Object.assign(new Error(code), { code })
  }
  return {
    ...real,
    openSync: (...a: Parameters<typeof real.openSync>) => (fail.open ? thrown(fail.open) : real.openSync(...a)),
    // A full disk: the create succeeds, writing the content does not.
    writeSync: (...a: Parameters<typeof real.writeSync>) =>
      fail.write ? thrown(fail.write) : (real.writeSync as (...b: unknown[]) => number)(...a),
  }
})

const dirs: string[] = []
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'confirm-unit-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  vi.restoreAllMocks()
  fail.link = undefined
  fail.open = undefined
  fail.write = undefined
  fail.rm = undefined
})

const SECRET = Buffer.alloc(32, 1)
const BINDING: Binding = {
  tool: 'tasks\0tasks-example',
  command: 'edit',
  args: { id: '1', status: 'done' },
  principal: { account: 'ann', profile: 'default' },
}
const TARGETS: Target[] = [{ id: '1', version: 3 }]
const NOW = 1_800_000_000_000

function hmac(secret: Buffer, part: string, value: string, length = 18): Buffer {
  return createHmac('sha256', secret).update(`${part}\0${value}`).digest().subarray(0, length)
}

function sign(body: Buffer, secret = SECRET): string {
  const encoded = body.toString('base64url')
  const mac = createHmac('sha256', secret).update(`agentcli-confirm-v3.${encoded}`).digest().toString('base64url')
  return `ct_3.${encoded}.${mac}`
}

type Parts = {
  kid: string
  jti: Buffer
  iat: number
  exp: number
  tool: Buffer
  cmd: Buffer
  acct: Buffer
  pol: Buffer
  bind: Buffer
  tv: Buffer
  targets: string
}

/** The body of a token, laid out as docs/contract.md and token.ts say, from its parts. */
function body(p: Parts): Buffer {
  const times = Buffer.alloc(12)
  times.writeUIntBE(p.iat, 0, 6)
  times.writeUIntBE(p.exp, 6, 6)
  const kid = Buffer.from(p.kid, 'latin1')
  return Buffer.concat([
    Buffer.from([kid.length]),
    kid,
    p.jti,
    times,
    p.tool,
    p.cmd,
    p.acct,
    p.pol,
    p.bind,
    p.tv,
    Buffer.from(p.targets),
  ])
}

/** The genuine parts of a token for BINDING and TARGETS, computed independently of token.ts. */
function parts(): Parts {
  return {
    kid: '',
    jti: Buffer.alloc(16, 7),
    iat: NOW,
    exp: NOW + 600_000,
    tool: hmac(SECRET, 'tool', JSON.stringify(BINDING.tool), 3),
    cmd: hmac(SECRET, 'cmd', '"edit"', 3),
    acct: hmac(SECRET, 'acct', '{"account":"ann","profile":"default"}', 3),
    pol: hmac(SECRET, 'pol', 'null', 3),
    bind: hmac(
      SECRET,
      'bind',
      `{"args":{"id":"1","status":"done"},"command":"edit","principal":{"account":"ann","profile":"default"},"tool":${JSON.stringify(BINDING.tool)}}`,
    ),
    tv: hmac(SECRET, 'tv', '[["1",3]]'),
    targets: '[["1",3]]',
  }
}

/** A correctly signed token with the genuine parts of BINDING, to vary one part at a time. */
function genuine(over: Partial<Parts>): string {
  return sign(body({ ...parts(), ...over }))
}

describe('canonicalJson', () => {
  it('sorts keys at every depth, drops undefined members, keeps arrays in order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: undefined, e: null } })).toBe('{"a":{"d":[2,1],"e":null},"b":1}')
    expect(canonicalJson(undefined)).toBe('null')
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }))
    expect(canonicalJson({ a: 1, a2: 2, A: 3 })).toBe('{"A":3,"a":1,"a2":2}')
  })
})

describe('mintToken / verifyToken', () => {
  const { token, claims } = mintToken(SECRET, BINDING, TARGETS, NOW, 600_000)

  it('round-trips, is at most 200 characters and reveals nothing of the tool, account or arguments', () => {
    expect(token).toMatch(/^ct_3\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(token.length).toBeLessThanOrEqual(MAX_TOKEN_CHARS)
    expect(MAX_TOKEN_CHARS).toBe(200)
    expect(verifyToken(SECRET, token, BINDING, NOW + 1)).toEqual({ ok: true, claims })
    const payload = Buffer.from(token.split('.')[1]!, 'base64url').toString('latin1')
    for (const hidden of ['ann', 'done', 'tasks', 'edit']) expect(payload).not.toContain(hidden)
    expect(claims.expiresAt - claims.issuedAt).toBe(600_000)
    expect(claims.targets).toEqual(TARGETS)
    expect(genuine({})).toMatch(/^ct_3\./)
    expect(verifyToken(SECRET, genuine({}), BINDING, NOW)).toMatchObject({ ok: true, claims: { targets: TARGETS } })
    // Two tokens for the same call differ (a fresh single-use nonce each).
    expect(mintToken(SECRET, BINDING, TARGETS, NOW, 600_000).claims.id).not.toBe(claims.id)
  })

  it('stays at most 200 characters with the longest key id and many or long targets, binding them by digest', () => {
    const long = [{ id: 'x'.repeat(500), version: 'v'.repeat(100) }]
    for (const targets of [TARGETS, long, Array.from({ length: 40 }, (_, i) => ({ id: String(i), version: i }))]) {
      const minted = mintToken(SECRET, BINDING, targets, NOW, 600_000, 'k'.repeat(32))
      expect(minted.token.length).toBeLessThanOrEqual(MAX_TOKEN_CHARS)
      expect(verifyToken(SECRET, minted.token, BINDING, NOW).ok).toBe(true)
      expect(verifyTargets(SECRET, minted.claims, targets)).toEqual({ ok: true })
    }
    expect(mintToken(SECRET, BINDING, long, NOW, 600_000).claims.targets).toBeUndefined()
  })

  it('binds key order-independently', () => {
    const reordered = { ...BINDING, args: { status: 'done', id: '1' } }
    expect(verifyToken(SECRET, token, reordered, NOW).ok).toBe(true)
  })

  it.each([
    ['other_tool', { ...BINDING, tool: 'other\0other-pkg' }],
    ['other_command', { ...BINDING, command: 'delete' }],
    ['other_account', { ...BINDING, principal: { account: 'bob', profile: 'default' } }],
    ['args_changed', { ...BINDING, args: { id: '1', status: 'open' } }],
    // A policy that appeared since the dry-run is named by its own hint; the one binding digest still decides.
    ['policy_changed', { ...BINDING, policy: 'p1' }],
  ] as Array<[string, Binding]>)('refuses %s', (reason, binding) => {
    expect(verifyToken(SECRET, token, binding, NOW)).toMatchObject({ ok: false, reason, claims })
  })

  it('the binding digest decides: hints that all match do not save a token whose binding differs', () => {
    // Genuine hints and times, but the binding digest of other arguments: refused.
    const other = genuine({ bind: hmac(SECRET, 'bind', '{"other":true}') })
    expect(verifyToken(SECRET, other, BINDING, NOW)).toMatchObject({ ok: false, reason: 'args_changed' })
    // Another account's hint with this binding's digest cannot happen from mint; it is still not accepted silently.
    const acct = genuine({ acct: Buffer.alloc(3), bind: hmac(SECRET, 'bind', '{"other":true}') })
    expect(verifyToken(SECRET, acct, BINDING, NOW)).toMatchObject({ ok: false, reason: 'other_account' })
  })

  it('a matching binding digest decides alone: hints are read only to name what moved, in the same order', () => {
    // Hints that no mint writes beside this binding's own digest (only a holder of the secret could sign them):
    // the binding digest covers every part a hint names, so the token is the one previewed.
    const odd = genuine({ tool: Buffer.alloc(3), cmd: Buffer.alloc(3), acct: Buffer.alloc(3), pol: Buffer.alloc(3) })
    expect(verifyToken(SECRET, odd, BINDING, NOW).ok).toBe(true)
    // Another tool or command still comes before the clock, and the clock before the account or the arguments.
    const later = claims.expiresAt + 1
    const cases: Array<[Binding, string]> = [
      [{ ...BINDING, tool: 'other\0other-pkg' }, 'other_tool'],
      [{ ...BINDING, command: 'delete' }, 'other_command'],
      [{ ...BINDING, principal: { account: 'bob', profile: 'default' } }, 'expired'],
      [{ ...BINDING, args: { id: '2' } }, 'expired'],
      [BINDING, 'expired'],
    ]
    for (const [binding, reason] of cases)
      expect(verifyToken(SECRET, token, binding, later)).toMatchObject({ ok: false, reason })
  })

  it('refuses at and after expiry, and a token issued in the future', () => {
    expect(verifyToken(SECRET, token, BINDING, claims.expiresAt)).toMatchObject({ ok: false, reason: 'expired' })
    expect(verifyToken(SECRET, token, BINDING, NOW - 31_000)).toMatchObject({ ok: false, reason: 'not_yet_valid' })
    expect(verifyToken(SECRET, token, BINDING, NOW - 29_000).ok).toBe(true)
    const backwards = genuine({ iat: NOW, exp: NOW - 1 })
    expect(verifyToken(SECRET, backwards, BINDING, NOW - 10)).toMatchObject({ ok: false, reason: 'not_yet_valid' })
  })

  it('refuses another secret', () => {
    expect(verifyToken(Buffer.alloc(32, 2), token, BINDING, NOW)).toEqual({ ok: false, reason: 'tampered' })
  })

  it('refuses every single-character change, including the spellings base64url decodes to the same bytes', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    let tried = 0
    for (let at = 0; at < token.length; at++) {
      if (token[at] === '.') continue
      for (const c of alphabet) {
        if (c === token[at]) continue
        const changed = token.slice(0, at) + c + token.slice(at + 1)
        tried++
        expect(verifyToken(SECRET, changed, BINDING, NOW).ok, `${at}:${c}`).toBe(false)
      }
    }
    expect(tried).toBeGreaterThan(8_000)
    // The last MAC character carries 2 padding bits: its 3 siblings decode to the same bytes and must not verify.
    const last = token.at(-1)!
    const base = alphabet.indexOf(last) & ~3
    for (let i = 0; i < 4; i++) {
      const sibling = token.slice(0, -1) + alphabet[base + i]
      expect(verifyToken(SECRET, sibling, BINDING, NOW).ok).toBe(sibling === token)
    }
  })

  it.each([
    ['no prefix', token.slice(3)],
    ['the old prefix', token.replace('ct_3.', 'ct_2.')],
    ['an extra part', `${token}.x`],
    ['a missing mac', token.split('.').slice(0, 2).join('.')],
    ['bad characters', token.replace('.', '.!')],
    ['a short mac', `${token.split('.').slice(0, 2).join('.')}.AAAA`],
    ['an unsigned body', `ct_3.${Buffer.from('nope').toString('base64url')}.${token.split('.')[2]}`],
    ['a signed body too short to hold the fields', sign(body(parts()).subarray(0, 60))],
    ['a signed empty body', sign(Buffer.alloc(0))],
    ['a signed body naming a key id longer than itself', sign(Buffer.from([200, 65, 66]))],
    ['a signed key id of control characters', genuine({ kid: '\u0001\u0002' })],
    ['signed targets that are not JSON', genuine({ targets: '[["1",' })],
  ])('refuses %s as tampered', (_, bad) => {
    expect(verifyToken(SECRET, bad, BINDING, NOW)).toEqual({ ok: false, reason: 'tampered' })
  })

  it('refuses correctly signed targets of another shape', () => {
    for (const targets of ['"x"', '[["1"]]', '["1"]', '[[1,1]]', '[["1",{}]]', '{}', 'null']) {
      expect(verifyToken(SECRET, genuine({ targets }), BINDING, NOW), targets).toEqual({
        ok: false,
        reason: 'tampered',
      })
    }
    const fine = genuine({ targets: '[["1",null],["2","v"]]' })
    expect(verifyToken(SECRET, fine, BINDING, NOW)).toMatchObject({
      ok: true,
      claims: {
        targets: [
          { id: '1', version: null },
          { id: '2', version: 'v' },
        ],
      },
    })
    // No targets part at all: bound by digest only.
    expect(verifyToken(SECRET, genuine({ targets: '' }), BINDING, NOW)).toMatchObject({
      ok: true,
      claims: { targets: undefined },
    })
  })

  it('names the key id before the MAC is checked, and the MAC covers it', () => {
    const withId = mintToken(SECRET, BINDING, TARGETS, NOW, 600_000, 'k7').token
    expect(tokenKeyId(withId)).toBe('k7')
    expect(tokenKeyId(token)).toBeNull()
    expect(tokenKeyId('nope')).toBeUndefined()
    expect(tokenKeyId('ct_3.!!!.x')).toBeUndefined()
    expect(tokenKeyId('ct_3.')).toBeUndefined()
    expect(tokenKeyId(`ct_3.${Buffer.from([9, 65]).toString('base64url')}.x`)).toBeUndefined()
    const bytes = Buffer.from(withId.split('.')[1]!, 'base64url')
    bytes[2] = '8'.charCodeAt(0)
    const relabelled = `ct_3.${bytes.toString('base64url')}.${withId.split('.')[2]}`
    expect(tokenKeyId(relabelled)).toBe('k8')
    expect(verifyToken(SECRET, relabelled, BINDING, NOW)).toEqual({ ok: false, reason: 'tampered' })
  })
})

describe('verifyTargets', () => {
  const { claims } = mintToken(SECRET, BINDING, [...TARGETS, { id: '0', version: 'x' }], NOW, 600_000)

  it('accepts the same targets in any order', () => {
    expect(verifyTargets(SECRET, claims, [{ id: '0', version: 'x' }, ...TARGETS])).toEqual({ ok: true })
  })

  it('names a moved or vanished target with its versions then and now', () => {
    expect(verifyTargets(SECRET, claims, [{ id: '0', version: 'y' }, ...TARGETS])).toEqual({
      ok: false,
      reason: 'state_drift',
      drift: [{ id: '0', version_then: 'x', version_now: 'y', gone: false }],
    })
    expect(verifyTargets(SECRET, claims, TARGETS)).toEqual({
      ok: false,
      reason: 'state_drift',
      drift: [{ id: '0', version_then: 'x', version_now: null, gone: true }],
    })
    expect(verifyTargets(SECRET, claims, [{ id: '0', version: 'x' }, ...TARGETS, { id: '9', version: 1 }])).toEqual({
      ok: false,
      reason: 'target_changed',
      drift: [],
    })
  })

  it('binds targets that do not fit by digest only, and still refuses a drift', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ id: String(i), version: i }))
    const { token, claims: big } = mintToken(SECRET, BINDING, many, NOW, 600_000)
    expect(big.targets).toBeUndefined()
    expect(token.length).toBeLessThanOrEqual(MAX_TOKEN_CHARS)
    expect(verifyTargets(SECRET, big, [...many].reverse())).toEqual({ ok: true })
    expect(verifyTargets(SECRET, big, many.slice(1))).toEqual({ ok: false, reason: 'state_drift', drift: [] })
  })

  it('binds duplicate ids deterministically', () => {
    const dup = [
      { id: 'a', version: 2 },
      { id: 'a', version: 1 },
    ]
    const { claims: c } = mintToken(SECRET, BINDING, dup, NOW, 600_000)
    expect(verifyTargets(SECRET, c, dup)).toEqual({ ok: true })
  })

  it('sameTargets compares sets of ids and versions', () => {
    const a = [
      { id: 'b', version: 1 },
      { id: 'a', version: 'x' },
    ]
    expect(sameTargets(a, [...a].reverse())).toBe(true)
    expect(sameTargets(a, [{ id: 'a', version: 'x' }])).toBe(false)
    expect(sameTargets(a, [a[0]!, { id: 'a', version: 'y' }])).toBe(false)
    expect(sameTargets(a, [a[0]!, { id: 'c', version: 'x' }])).toBe(false)
  })

  it('targetDrift and goneDrift', () => {
    expect(targetDrift([{ id: 'a', version: 1 }], [{ id: 'a', version: 1 }])).toEqual({
      ok: false,
      reason: 'state_drift',
      drift: [],
    })
    const then = [
      { id: 'a', version: 1 },
      { id: 'b', version: 2 },
    ]
    expect(goneDrift(then, 'b')).toEqual([{ id: 'b', version_then: 2, version_now: null, gone: true }])
    expect(goneDrift(then, undefined)).toHaveLength(2)
    expect(goneDrift(undefined, 'b')).toEqual([])
  })
})

describe('fileSecretSource', () => {
  it('creates 32 random bytes as hex, 0600 in a 0700 dir, and caches them', async () => {
    const dir = join(temp(), 'cfg')
    const source = fileSecretSource(dir)
    const a = await source.get()
    expect(a).toHaveLength(32)
    expect(statSync(join(dir, 'confirm.secret')).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(await source.get()).toBe(a)
    expect(await fileSecretSource(dir).get()).toEqual(a)
    expect(source.description).toBe(join(dir, 'confirm.secret'))
  })

  it('ends with one secret when many create it at once', async () => {
    const dir = join(temp(), 'cfg')
    const secrets = await Promise.all(Array.from({ length: 8 }, () => fileSecretSource(dir).get()))
    for (const s of secrets) expect(s).toEqual(secrets[0])
    expect(readdirSync(dir)).toEqual(['confirm.secret'])
  })

  it('refuses a secret readable by others, and a corrupt one', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'confirm.secret'), 'ab'.repeat(32), { mode: 0o640 })
    chmodSync(join(dir, 'confirm.secret'), 0o640)
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({ code: 'E_CONFIG', details: { mode: '640' } })
    chmodSync(join(dir, 'confirm.secret'), 0o600)
    writeFileSync(join(dir, 'confirm.secret'), 'short')
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({ code: 'E_IO' })
  })

  it('refuses a secret in a directory other users, or its group, can write', async () => {
    const dir = temp()
    await fileSecretSource(dir).get()
    chmodSync(dir, 0o777)
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({
      code: 'E_CONFIG',
      details: { path: dir, mode: '777', fix: `chmod 700 ${dir}` },
    })
    chmodSync(dir, 0o1777)
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({ code: 'E_CONFIG' })
    chmodSync(dir, 0o770)
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({
      code: 'E_CONFIG',
      details: { path: dir, mode: '770', fix: `chmod 700 ${dir}` },
    })
    chmodSync(dir, 0o700)
    expect(await fileSecretSource(dir).get()).toHaveLength(32)
  })

  it('reports an unreadable secret as E_IO', async () => {
    const dir = temp()
    mkdirSync(join(dir, 'confirm.secret'), { mode: 0o700 })
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({ code: 'E_IO' })
  })

  it('reports a config dir it cannot create in as a failure, not a fresh secret', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'file'), '')
    await expect(fileSecretSource(join(dir, 'file', 'cfg')).get()).rejects.toBeDefined()
  })

  it('reports a failed link as E_IO', async () => {
    const dir = temp()
    fail.link = 'EACCES'
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({
      code: 'E_IO',
      message: expect.stringContaining('EACCES'),
    })
  })
})

describe('envSecretSource', () => {
  it('accepts 64 hex characters and refuses anything else', async () => {
    expect(await envSecretSource('X_SECRET', ` ${'AB'.repeat(32)} `).get()).toEqual(Buffer.alloc(32, 0xab))
    await expect(envSecretSource('X_SECRET', 'nope').get()).rejects.toMatchObject({
      code: 'E_CONFIG',
      details: { env: 'X_SECRET' },
    })
    expect(envSecretSource('X_SECRET', 'x').description).toBe('$X_SECRET')
  })
})

describe('fileTokenLedger', () => {
  it('consumes once, then reports used; a released token can be consumed again', async () => {
    const dir = temp()
    const ledger = fileTokenLedger(dir)
    expect(await ledger.isUsed('t1')).toBe(false)
    expect(await ledger.consume('t1', NOW, NOW)).toBe(true)
    expect(await ledger.consume('t1', NOW, NOW)).toBe(false)
    expect(await ledger.isUsed('t1')).toBe(true)
    const files = readdirSync(join(dir, 'confirm-ledger'))
    expect(files).toHaveLength(1)
    expect(files[0]).not.toContain('t1')
    await ledger.release('t1')
    expect(await ledger.isUsed('t1')).toBe(false)
    await ledger.release('t1')
    expect(await ledger.consume('t1', NOW, NOW)).toBe(true)
  })

  it('lets exactly one of many concurrent consumers win', async () => {
    const ledger = fileTokenLedger(temp())
    const wins = await Promise.all(Array.from({ length: 16 }, () => ledger.consume('race', NOW, NOW)))
    expect(wins.filter(Boolean)).toHaveLength(1)
  })

  it('fails closed with E_IO (path, fix, marked as before any change) when the ledger is a file', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'confirm-ledger'), 'a file')
    const ledger = fileTokenLedger(dir)
    const expected = { code: 'E_IO', details: { path: join(dir, 'confirm-ledger'), fix: expect.any(String) } }
    await expect(ledger.isUsed('t')).rejects.toMatchObject(expected)
    const error = await ledger.consume('t', NOW, NOW).catch((e: unknown) => e)
    expect(error).toMatchObject(expected)
    expect(isBeforeChange(error)).toBe(true)
  })

  it('in the opted-in degraded mode, warns and lets the write proceed', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'confirm-ledger'), 'a file')
    const warnings: string[] = []
    const ledger = fileTokenLedger(dir, { degraded: (m) => warnings.push(m) })
    expect(await ledger.isUsed('t')).toBe(false)
    expect(await ledger.consume('t', NOW, NOW)).toBe(true)
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toContain('single-use is not enforced')
  })

  it('fails closed when the marker cannot be created', async () => {
    const dir = temp()
    fail.open = 'EACCES'
    await expect(fileTokenLedger(dir).consume('t', NOW, NOW)).rejects.toMatchObject({
      code: 'E_IO',
      message: expect.stringContaining('EACCES'),
    })
  })

  it('a marker that cannot be written (full disk) is removed: the token is not consumed', async () => {
    const dir = temp()
    fail.write = 'ENOSPC'
    const ledger = fileTokenLedger(dir)
    await expect(ledger.consume('t', NOW, NOW)).rejects.toMatchObject({ code: 'E_IO' })
    fail.write = undefined
    expect(readdirSync(join(dir, 'confirm-ledger'))).toEqual([])
    expect(await ledger.consume('t', NOW, NOW)).toBe(true)
  })

  it('prunes markers only once their own expiry passed on the given clock; keeps fresh unreadable ones', async () => {
    const dir = temp()
    const ledger = fileTokenLedger(dir)
    // No opportunistic prune while the markers are laid down: this test counts what one prune removes.
    vi.spyOn(Math, 'random').mockReturnValue(0.99)
    await ledger.consume('old', NOW - 1, NOW)
    await ledger.consume('edge', NOW, NOW)
    await ledger.consume('live', NOW + 60_000, NOW)
    const marks = join(dir, 'confirm-ledger')
    writeFileSync(join(marks, 'garbage-old'), 'x')
    utimesSync(join(marks, 'garbage-old'), new Date(NOW - 2 * 86_400_000), new Date(NOW - 2 * 86_400_000))
    mkdirSync(join(marks, 'not-a-marker'))
    writeFileSync(join(marks, 'garbage-new'), 'x')
    utimesSync(join(marks, 'garbage-new'), new Date(NOW), new Date(NOW))
    // A marker whose winner has not written its expiry yet reads empty: it must not look expired.
    writeFileSync(join(marks, 'being-written'), '')
    utimesSync(join(marks, 'being-written'), new Date(NOW), new Date(NOW))
    expect(await prune(marks, NOW)).toBe(2)
    expect(await ledger.isUsed('live')).toBe(true)
    expect(await ledger.isUsed('edge')).toBe(true)
    expect(await ledger.isUsed('old')).toBe(false)
    expect(existsSync(join(marks, 'garbage-new'))).toBe(true)
    expect(existsSync(join(marks, 'being-written'))).toBe(true)
    expect(await prune(join(dir, 'missing'), NOW)).toBe(0)
  })

  it('prunes now and then on consume, on the clock it is given', async () => {
    const dir = temp()
    const ledger = fileTokenLedger(dir)
    await ledger.consume('old', NOW + 1000, NOW)
    vi.spyOn(Math, 'random').mockReturnValue(0)
    await ledger.consume('new', NOW + 60_000, NOW)
    expect(await ledger.isUsed('old')).toBe(true)
    await ledger.consume('newer', NOW + 60_000, NOW + 2000)
    expect(await ledger.isUsed('old')).toBe(false)
  })
})

describe('fileIdempotencyLedger', () => {
  const ANN = idempotencyScope('tasks', { account: 'ann' })
  const BOB = idempotencyScope('tasks', { account: 'bob' })

  it('runs once, replays after, and refuses other arguments or an unfinished attempt', async () => {
    const dir = temp()
    const ledger = fileIdempotencyLedger(dir)
    expect(await ledger.lookup(ANN, 'create', 'k', { a: 1 })).toEqual({ state: 'none' })
    let runs = 0
    const write = async () => ({ id: String(++runs), api_token: 'canary-idem-secret' })
    expect(await ledger.run(ANN, 'create', 'k', { a: 1 }, write)).toEqual({
      data: { id: '1', api_token: 'canary-idem-secret' },
      replayed: false,
    })
    expect(await ledger.run(ANN, 'create', 'k', { a: 1 }, write)).toEqual({
      data: { id: '1', api_token: '<redacted>' },
      replayed: true,
    })
    expect(runs).toBe(1)
    expect(await ledger.lookup(ANN, 'create', 'k', { a: 1 })).toMatchObject({ state: 'done' })
    expect(await ledger.lookup(ANN, 'create', 'k', { a: 2 })).toEqual({ state: 'mismatch' })
    await expect(ledger.run(ANN, 'create', 'k', { a: 2 }, write)).rejects.toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'idempotency_key_reused' },
    })
    await expect(
      ledger.run(ANN, 'create', 'boom', { a: 1 }, async () => Promise.reject(new Error('crashed'))),
    ).rejects.toThrow('crashed')
    expect(await ledger.lookup(ANN, 'create', 'boom', { a: 1 })).toEqual({ state: 'pending' })
    await expect(ledger.run(ANN, 'create', 'boom', { a: 1 }, write)).rejects.toMatchObject({
      details: { reason: 'idempotency_in_doubt' },
    })
    const files = readdirSync(join(dir, 'idempotency'))
    expect(files.join()).not.toContain('boom')
    expect(keyReused('z').details).toMatchObject({ reason: 'idempotency_key_reused', idempotency_key: 'z' })
  })

  it('keeps keys per principal: another account neither sees nor replays them', async () => {
    const ledger = fileIdempotencyLedger(temp())
    await ledger.run(ANN, 'create', 'k', { a: 1 }, async () => 'ann')
    expect(await ledger.lookup(BOB, 'create', 'k', { a: 1 })).toEqual({ state: 'none' })
    expect(await ledger.lookup(BOB, 'create', 'k', { a: 2 })).toEqual({ state: 'none' })
    expect(await ledger.run(BOB, 'create', 'k', { a: 1 }, async () => 'bob')).toEqual({ data: 'bob', replayed: false })
    expect(idempotencyScope('tasks', { account: 'ann' })).toBe(ANN)
    expect(idempotencyScope('other', { account: 'ann' })).not.toBe(ANN)
  })

  it('a failure known to precede any change clears the intent; a retry runs', async () => {
    const ledger = fileIdempotencyLedger(temp())
    const early = beforeChange(new Error('store locked'))
    await expect(ledger.run(ANN, 'create', 'k', {}, async () => Promise.reject(early))).rejects.toBe(early)
    expect(await ledger.lookup(ANN, 'create', 'k', {})).toEqual({ state: 'none' })
    expect(await ledger.run(ANN, 'create', 'k', {}, async () => 2)).toEqual({ data: 2, replayed: false })
  })

  it('an intent that cannot be cleared stays in doubt (never a silent retry)', async () => {
    const ledger = fileIdempotencyLedger(temp())
    fail.rm = 'EACCES'
    const early = beforeChange(new Error('store locked'))
    await expect(ledger.run(ANN, 'create', 'k', {}, async () => Promise.reject(early))).rejects.toBe(early)
    expect(await ledger.lookup(ANN, 'create', 'k', {})).toEqual({ state: 'pending' })
  })

  it('failing to record a completed write keeps the key in doubt and is not "nothing changed"', async () => {
    const dir = temp()
    const ledger = fileIdempotencyLedger(dir)
    const error = await ledger
      .run(ANN, 'create', 'k', {}, async () => {
        // The write happened; then the ledger's directory became unusable.
        rmSync(join(dir, 'idempotency'), { recursive: true, force: true })
        writeFileSync(join(dir, 'idempotency'), 'now a file')
        return 1
      })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_IO' })
    expect(isBeforeChange(error)).toBe(false)
  })

  it('a corrupt record is E_IO, not a silent replay', async () => {
    const dir = temp()
    const ledger = fileIdempotencyLedger(dir)
    await ledger.run(ANN, 'create', 'k', {}, async () => 1)
    const [file] = readdirSync(join(dir, 'idempotency')).filter((f) => f.endsWith('.json'))
    writeFileSync(join(dir, 'idempotency', file!), '{"status":"odd"}')
    await expect(ledger.lookup(ANN, 'create', 'k', {})).rejects.toMatchObject({ code: 'E_IO' })
  })
})

describe('appendAudit', () => {
  it('appends redacted JSON lines, 0600', async () => {
    const dir = temp()
    const path = auditPath(join(dir, 'data'))
    const draft = {
      path,
      command: 'create',
      args: ['--title', 'Bearer abcd1234efgh5678ijkl'],
      account: 'ann',
      mode: 'confirm' as const,
      token_id: 'id1',
    }
    await appendAudit(draft, { result_code: 'OK', exit_code: 0, duration_ms: 5 })
    await appendAudit({ ...draft, mode: 'refused' }, { result_code: 'E_CONFLICT', exit_code: 6, duration_ms: 3 })
    const lines = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatchObject({
      command: 'create',
      args: ['--title', 'Bearer <redacted>'],
      token_id: 'id1',
      exit_code: 0,
    })
    expect(lines[0]).not.toHaveProperty('path')
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  it('warns on stderr instead of failing when the log cannot be written', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'data'), 'a file')
    const writes: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      writes.push(String(chunk))
      return true
    })
    await appendAudit(
      { path: auditPath(join(dir, 'data')), command: 'x', args: [], account: null, mode: 'dry_run', token_id: null },
      { result_code: 'OK', exit_code: 0, duration_ms: 1 },
    )
    expect(writes.join()).toContain('cannot append to the audit log')
  })
})

describe('preview schemas', () => {
  it('accept what the flow prints', async () => {
    const z = await loadZod()
    expect(
      dryRunSchema(z).safeParse({
        preview: {
          changes: [],
          impact: {
            action: 'delete',
            blast_radius: 'set',
            target_count: 0,
            targets: [],
            reversible: false,
            undo: null,
            cost: null,
          },
        },
        confirm_token: 'ct_1.a.b',
        expires_at: '2026-01-01T00:00:00.000Z',
      }).success,
    ).toBe(true)
    expect(
      batchSchema(z).safeParse({
        results: [{ id: '1', ok: false, error: { code: 'E_NOT_FOUND', message: 'x' } }],
        summary: { ok_count: 0, error_count: 1 },
      }).success,
    ).toBe(true)
  })
})

describe('a token bound to a policy', () => {
  const key = Buffer.alloc(32, 5)
  const b: Binding = { tool: 't', command: 'c', args: {}, principal: {}, policy: 'pol_a' }
  it('verifies under the same policy digest only (policy_changed otherwise, or when one appeared or went)', () => {
    const { token } = mintToken(key, b, [], 1_000, 60_000)
    expect(verifyToken(key, token, b, 2_000).ok).toBe(true)
    const { policy: _, ...none } = b
    for (const other of [{ ...b, policy: 'pol_b' }, none])
      expect(verifyToken(key, token, other, 2_000)).toMatchObject({ ok: false, reason: 'policy_changed' })
    const bare = mintToken(key, none, [], 1_000, 60_000).token
    expect(verifyToken(key, bare, b, 2_000)).toMatchObject({ ok: false, reason: 'policy_changed' })
  })
  it('names no key id for a payload that is not JSON', () => {
    expect(tokenKeyId(`ct_2.${Buffer.from('not json').toString('base64url')}.x`)).toBeUndefined()
  })
})
