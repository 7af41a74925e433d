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
import { appendAudit, auditPath } from '../src/confirm/audit.js'
import { canonicalJson } from '../src/confirm/canonical.js'
import { fileIdempotencyLedger, keyReused } from '../src/confirm/idempotency.js'
import { fileTokenLedger, prune } from '../src/confirm/ledger.js'
import { batchSchema, dryRunSchema } from '../src/confirm/preview.js'
import { envSecretSource, fileSecretSource } from '../src/confirm/secret.js'
import { type Binding, mintToken, readClaims, verifyToken } from '../src/confirm/token.js'
import { loadZod } from '../src/schema.js'

// Root ignores file permissions, so the few I/O failures it cannot cause for real are injected here.
const fail = vi.hoisted(() => ({ link: undefined as string | undefined, open: undefined as string | undefined }))
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>()
  const injected = (code: string) => Promise.reject(Object.assign(new Error(code), { code }))
  return {
    ...real,
    link: (...a: Parameters<typeof real.link>) => (fail.link ? injected(fail.link) : real.link(...a)),
    open: (...a: Parameters<typeof real.open>) => (fail.open ? injected(fail.open) : real.open(...a)),
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
})

const SECRET = Buffer.alloc(32, 1)
const BINDING: Binding = {
  command: 'edit',
  args: { id: '1', status: 'done' },
  targets: ['1'],
  versions: { '1': 3 },
  principal: { account: 'ann', profile: 'default' },
}
const NOW = 1_800_000_000_000

function forge(payload: unknown, secret = SECRET): string {
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url')
  const mac = createHmac('sha256', secret).update(`agentcli-confirm-v1.${encoded}`).digest().toString('base64url')
  return `ct_1.${encoded}.${mac}`
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
  const { token, claims } = mintToken(SECRET, BINDING, NOW, 600_000)

  it('round-trips and reveals nothing of the binding', () => {
    expect(token).toMatch(/^ct_1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(verifyToken(SECRET, token, BINDING, NOW + 1)).toEqual({ ok: true, claims })
    const payload = Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')
    expect(payload).not.toContain('ann')
    expect(payload).not.toContain('done')
    expect(claims.expiresAt - claims.issuedAt).toBe(600_000)
  })

  it('binds key order-independently', () => {
    const reordered = { ...BINDING, args: { status: 'done', id: '1' }, targets: ['1'] }
    expect(verifyToken(SECRET, token, reordered, NOW).ok).toBe(true)
  })

  it.each([
    ['other_command', { ...BINDING, command: 'delete' }],
    ['other_account', { ...BINDING, principal: { account: 'bob', profile: 'default' } }],
    ['args_changed', { ...BINDING, args: { id: '1', status: 'open' } }],
    ['target_changed', { ...BINDING, targets: ['1', '2'] }],
    ['state_drift', { ...BINDING, versions: { '1': 4 } }],
  ] as Array<[string, Binding]>)('refuses %s', (reason, binding) => {
    expect(verifyToken(SECRET, token, binding, NOW)).toMatchObject({ ok: false, reason, claims })
  })

  it('refuses at and after expiry', () => {
    expect(verifyToken(SECRET, token, BINDING, claims.expiresAt)).toMatchObject({ ok: false, reason: 'expired' })
  })

  it('refuses another secret', () => {
    expect(verifyToken(Buffer.alloc(32, 2), token, BINDING, NOW)).toEqual({ ok: false, reason: 'tampered' })
  })

  it.each([
    ['no prefix', token.slice(3)],
    ['an extra part', `${token}.x`],
    ['a missing mac', token.split('.').slice(0, 2).join('.')],
    ['bad characters', token.replace('.', '.!')],
    ['a short mac', `${token.split('.').slice(0, 2).join('.')}.AAAA`],
    ['a non-JSON payload', `ct_1.${Buffer.from('nope').toString('base64url')}.AAAA`],
  ])('refuses %s as tampered', (_, bad) => {
    expect(verifyToken(SECRET, bad, BINDING, NOW)).toEqual({ ok: false, reason: 'tampered' })
    expect(readClaims(SECRET, bad)).toBeUndefined()
  })

  it('refuses a correctly signed payload of another version or shape', () => {
    for (const payload of [
      { v: 2, jti: 'x', cmd: 'edit', iat: 1, exp: NOW * 2, d: {} },
      { v: 1, jti: 1, cmd: 'edit', iat: 1, exp: 2, d: {} },
      { v: 1, jti: 'x', cmd: 'edit', iat: 1, exp: 'later', d: {} },
      { v: 1, jti: 'x', cmd: 'edit', iat: 'then', exp: 2, d: {} },
      { v: 1, jti: 'x', cmd: 'edit', iat: 1, exp: 2 },
    ]) {
      expect(verifyToken(SECRET, forge(payload), BINDING, NOW)).toEqual({ ok: false, reason: 'tampered' })
    }
  })

  it('readClaims returns the claims of a genuine token only', () => {
    expect(readClaims(SECRET, token)).toEqual(claims)
    expect(readClaims(Buffer.alloc(32, 9), token)).toBeUndefined()
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
  it('consumes once, then reports used', async () => {
    const dir = temp()
    const ledger = fileTokenLedger(dir, () => {})
    expect(await ledger.isUsed('t1')).toBe(false)
    expect(await ledger.consume('t1', NOW)).toBe(true)
    expect(await ledger.consume('t1', NOW)).toBe(false)
    expect(await ledger.isUsed('t1')).toBe(true)
    const files = readdirSync(join(dir, 'confirm-ledger'))
    expect(files).toHaveLength(1)
    expect(files[0]).not.toContain('t1')
  })

  it('lets exactly one of many concurrent consumers win', async () => {
    const ledger = fileTokenLedger(temp(), () => {})
    const wins = await Promise.all(Array.from({ length: 16 }, () => ledger.consume('race', NOW)))
    expect(wins.filter(Boolean)).toHaveLength(1)
  })

  it('degrades with a warning when the ledger cannot be used', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'confirm-ledger'), 'a file')
    const warnings: string[] = []
    const ledger = fileTokenLedger(dir, (m) => warnings.push(m))
    expect(await ledger.isUsed('t')).toBe(false)
    expect(await ledger.consume('t', NOW)).toBe(true)
    expect(warnings).toHaveLength(2)
  })

  it('degrades when the marker cannot be created', async () => {
    const dir = temp()
    mkdirSync(join(dir, 'confirm-ledger'))
    chmodSync(join(dir, 'confirm-ledger'), 0o500)
    const warnings: string[] = []
    const ledger = fileTokenLedger(dir, (m) => warnings.push(m))
    fail.open = 'EACCES'
    expect(await ledger.consume('t', NOW)).toBe(true)
    expect(warnings[0]).toContain('EACCES')
  })

  it('prunes expired markers, keeps live ones, and ages out unreadable ones', async () => {
    const dir = temp()
    const ledger = fileTokenLedger(dir, () => {})
    await ledger.consume('old', NOW - 1)
    await ledger.consume('live', NOW + 60_000)
    const marks = join(dir, 'confirm-ledger')
    writeFileSync(join(marks, 'garbage-old'), 'x')
    utimesSync(join(marks, 'garbage-old'), new Date(NOW - 2 * 86_400_000), new Date(NOW - 2 * 86_400_000))
    mkdirSync(join(marks, 'not-a-marker'))
    writeFileSync(join(marks, 'garbage-new'), 'x')
    utimesSync(join(marks, 'garbage-new'), new Date(NOW), new Date(NOW))
    expect(await prune(marks, NOW)).toBe(2)
    expect(await ledger.isUsed('live')).toBe(true)
    expect(await ledger.isUsed('old')).toBe(false)
    expect(existsSync(join(marks, 'garbage-new'))).toBe(true)
    expect(await prune(join(dir, 'missing'), NOW)).toBe(0)
  })

  it('prunes now and then on consume', async () => {
    const dir = temp()
    const ledger = fileTokenLedger(dir, () => {})
    await ledger.consume('old', 1)
    vi.spyOn(Math, 'random').mockReturnValue(0)
    await ledger.consume('new', Date.now() + 60_000)
    expect(await ledger.isUsed('old')).toBe(false)
  })
})

describe('fileIdempotencyLedger', () => {
  it('runs once, replays after, and refuses other arguments or an unfinished attempt', async () => {
    const dir = temp()
    const ledger = fileIdempotencyLedger(dir)
    expect(await ledger.lookup('create', 'k', { a: 1 })).toEqual({ state: 'none' })
    let runs = 0
    const write = async () => ({ id: String(++runs), api_token: 'canary-idem-secret' })
    expect(await ledger.run('create', 'k', { a: 1 }, write)).toEqual({
      data: { id: '1', api_token: 'canary-idem-secret' },
      replayed: false,
    })
    expect(await ledger.run('create', 'k', { a: 1 }, write)).toEqual({
      data: { id: '1', api_token: '<redacted>' },
      replayed: true,
    })
    expect(runs).toBe(1)
    expect(await ledger.lookup('create', 'k', { a: 1 })).toMatchObject({ state: 'done' })
    expect(await ledger.lookup('create', 'k', { a: 2 })).toEqual({ state: 'mismatch' })
    await expect(ledger.run('create', 'k', { a: 2 }, write)).rejects.toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'idempotency_key_reused' },
    })
    await expect(
      ledger.run('create', 'boom', { a: 1 }, async () => Promise.reject(new Error('crashed'))),
    ).rejects.toThrow('crashed')
    expect(await ledger.lookup('create', 'boom', { a: 1 })).toEqual({ state: 'pending' })
    await expect(ledger.run('create', 'boom', { a: 1 }, write)).rejects.toMatchObject({
      details: { reason: 'idempotency_in_doubt' },
    })
    const files = readdirSync(join(dir, 'idempotency'))
    expect(files.join()).not.toContain('boom')
    expect(keyReused('z').details).toMatchObject({ reason: 'idempotency_key_reused', idempotency_key: 'z' })
  })

  it('a corrupt record is E_IO, not a silent replay', async () => {
    const dir = temp()
    const ledger = fileIdempotencyLedger(dir)
    await ledger.run('create', 'k', {}, async () => 1)
    const [file] = readdirSync(join(dir, 'idempotency')).filter((f) => f.endsWith('.json'))
    writeFileSync(join(dir, 'idempotency', file!), '{"status":"odd"}')
    await expect(ledger.lookup('create', 'k', {})).rejects.toMatchObject({ code: 'E_IO' })
  })
})

describe('appendAudit', () => {
  it('appends redacted JSON lines, 0600', () => {
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
    appendAudit(draft, { result_code: 'OK', exit_code: 0, duration_ms: 5 })
    appendAudit({ ...draft, mode: 'refused' }, { result_code: 'E_CONFLICT', exit_code: 6, duration_ms: 3 })
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

  it('warns on stderr instead of failing when the log cannot be written', () => {
    const dir = temp()
    writeFileSync(join(dir, 'data'), 'a file')
    const writes: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      writes.push(String(chunk))
      return true
    })
    appendAudit(
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
        preview: { changes: [] },
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
