import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { mintToken } from '../../../src/confirm/token.js'
import { fileJobStore, newJobId } from '../../../src/jobs/file-store.js'
import { giveToNobody, NOBODY, tasksAsNobody } from '../../support/as-nobody.js'
import {
  env,
  fixture,
  jobRecord,
  ROOT,
  seed,
  shiftedClock,
  storeBytes,
  storePath,
  tasks,
  useSandbox,
} from '../../support/helpers.js'

const box = useSandbox()
// An injected secret must look random (a patterned one is refused, docs/fleet.md).
const SHARED = '3c8185dfc330c3fe243b4263dbc3ce1711b5ba866d70d4b8ee1c61b287321a75'

async function dryRun(b: Sandbox, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const run = await tasks(b, [...args, '--dry-run'], { env: extraEnv })
  expect(run.code, run.stdout + run.stderr).toBe(0)
  return env(run).data.confirm_token as string
}

function expectRefused(run: ToolRun, reason: string): void {
  expect(run.code, run.stdout + run.stderr).toBe(6)
  expect(env(run).error).toMatchObject({ code: 'E_CONFLICT', retryable: false, details: { reason } })
  // The next step, as SKILL.md promises: the same call's dry-run, without the token.
  const next = env(run).error.details.dry_run_command as string
  expect(next).toMatch(/ --dry-run$/)
  expect(next).not.toMatch(/--confirm|ct_/)
}

function dataDir(b: Sandbox): string {
  return join(b.env.XDG_DATA_HOME!, 'tasks')
}

function configDir(b: Sandbox): string {
  return join(b.env.XDG_CONFIG_HOME!, 'tasks')
}

function auditLines(b: Sandbox): Array<Record<string, unknown>> {
  const path = join(dataDir(b), 'audit.jsonl')
  if (!existsSync(path)) return []
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
}

/** A stored login, as `login resume` leaves it (the session names the account and its scopes). */
function storedLogin(b: Sandbox, account: string, scopes: string[]): void {
  mkdirSync(configDir(b), { recursive: true, mode: 0o700 })
  writeFileSync(join(configDir(b), 'session.json'), JSON.stringify({ account, scopes }), { mode: 0o600 })
}

describe('a token binds the acting account and its permission context', () => {
  it('an injected account (TASKS_TOKEN/TASKS_ACCOUNT) cannot confirm as another, nor with another token', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const ann = { TASKS_TOKEN: 'tok-ann-1', TASKS_ACCOUNT: 'ann' }
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'], ann)
    const before = storeBytes(box())
    for (const other of [
      { TASKS_TOKEN: 'tok-bob-1', TASKS_ACCOUNT: 'bob' },
      { TASKS_TOKEN: 'tok-ann-1', TASKS_ACCOUNT: 'bob' },
      { TASKS_TOKEN: 'tok-other', TASKS_ACCOUNT: 'ann' },
      {},
    ]) {
      expectRefused(
        await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token], { env: other }),
        'other_account',
      )
    }
    expect(storeBytes(box())).toBe(before)
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token], { env: ann })
    expect(run.code, run.stdout).toBe(0)
    const lines = auditLines(box())
    expect(lines.at(-1)).toMatchObject({ mode: 'confirm', account: 'ann', exit_code: 0 })
    expect(lines.filter((l) => l.mode === 'refused').map((l) => l.account)).toEqual(['bob', 'bob', 'ann', null])
  })

  it('a stored login: another account, or the same account with other scopes, is refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    storedLogin(box(), 'ann', ['tasks:read'])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    storedLogin(box(), 'bob', ['tasks:read'])
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'other_account')
    storedLogin(box(), 'ann', ['tasks:read', 'tasks:admin'])
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'other_account')
    storedLogin(box(), 'ann', ['tasks:read'])
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expect(run.code, run.stdout).toBe(0)
    expect(auditLines(box()).map((l) => [l.mode, l.account])).toEqual([
      ['dry_run', 'ann'],
      ['refused', 'bob'],
      ['refused', 'ann'],
      ['confirm', 'ann'],
    ])
  })
})

describe('a tool extends the principal through its hook', () => {
  it('a token minted with one role (the permission context the tool knows) is refused with another', async () => {
    const admin = { FIXTURE_ROLE: 'admin' }
    const dry = await fixture(box(), ['create', '--title', 'x', '--dry-run'], { env: admin })
    const token = env(dry).data.confirm_token
    expectRefused(await fixture(box(), ['create', '--title', 'x', '--confirm', token]), 'other_account')
    const ok = await fixture(box(), ['create', '--title', 'x', '--confirm', token], { env: admin })
    expect(ok.code, ok.stdout).toBe(0)
  })
})

describe('a token has one spelling, and cannot come from the future', () => {
  it('the spellings of the last MAC character that decode to the same bytes are all refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const base = alphabet.indexOf(token.at(-1)!) & ~3
    const siblings = [0, 1, 2, 3].map((i) => token.slice(0, -1) + alphabet[base + i]).filter((t) => t !== token)
    expect(siblings).toHaveLength(3)
    const before = storeBytes(box())
    for (const sibling of siblings)
      expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', sibling]), 'tampered')
    expect(storeBytes(box())).toBe(before)
    expect((await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])).code).toBe(0)
  })

  it('a token issued in the future (a clock set ahead at dry-run) is refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'], shiftedClock(5 * 60_000))
    const before = storeBytes(box())
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'not_yet_valid')
    expect(storeBytes(box())).toBe(before)
  })
})

describe('a token binds the tool', () => {
  it('with one secret shared by two tools, a token of one is refused by the other', async () => {
    const shared = { TASKS_CONFIRM_SECRET: SHARED, FIXTURE_CONFIRM_SECRET: SHARED }
    const token = await dryRun(box(), ['create', '--title', 'x'], shared)
    const foreign = await fixture(box(), ['create', '--title', 'x', '--confirm', token], { env: shared })
    expectRefused(foreign, 'other_tool')
    // The fixture's own token, same secret, same call: accepted (the refusal was the tool, nothing else).
    const own = await fixture(box(), ['create', '--title', 'x', '--dry-run'], { env: shared })
    const ok = await fixture(box(), ['create', '--title', 'x', '--confirm', env(own).data.confirm_token], {
      env: shared,
    })
    expect(ok.code, ok.stdout).toBe(0)
    expectRefused(
      await tasks(box(), ['create', '--title', 'x', '--confirm', env(own).data.confirm_token], { env: shared }),
      'other_tool',
    )
    expect(env(await tasks(box(), ['list'], { env: shared })).data.count).toBe(0)
  })
})

describe('the check order leaks nothing', () => {
  it('a garbage, forged, expired or foreign token is E_CONFLICT before any state is read', async () => {
    // The store is corrupt: any read of it would answer E_IO, so exit 6 proves no read happened.
    mkdirSync(dataDir(box()), { recursive: true })
    const token = await dryRun(box(), ['create', '--title', 'x'])
    const stale = await dryRun(box(), ['create', '--title', 'x'], shiftedClock(-11 * 60_000))
    const foreign = await dryRun(box(), ['create', '--title', 'x'], { TASKS_ACCOUNT: 'eve', TASKS_TOKEN: 'e' })
    writeFileSync(storePath(box()), '{ corrupt')
    const cases: Array<[string[], string]> = [
      [['edit', '9', '--status', 'done', '--confirm', 'ct_garbage'], 'tampered'],
      [['delete', '9', '--confirm', 'ct_3.e30.AAAA'], 'tampered'],
      [['edit', '9', '--status', 'done', '--confirm', token], 'other_command'],
      [['create', '--title', 'y', '--confirm', token], 'args_changed'],
      [['create', '--title', 'x', '--confirm', stale], 'expired'],
      [['create', '--title', 'x', '--confirm', foreign], 'other_account'],
    ]
    for (const [args, reason] of cases) expectRefused(await tasks(box(), args), reason)
    // The same call with the genuine token does read the store, and says it is corrupt.
    const genuine = await tasks(box(), ['create', '--title', 'x', '--confirm', token])
    expect(genuine.code).toBe(1)
    expect(env(genuine).error.code).toBe('E_IO')
  })

  it('a target deleted between dry-run and confirm is state drift (exit 6) naming it, not E_NOT_FOUND', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'])
    const del = await dryRun(box(), ['delete', '1'])
    expect((await tasks(box(), ['delete', '1', '--confirm', del])).code).toBe(0)
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expectRefused(run, 'state_drift')
    expect(env(run).error.details.drift).toEqual([{ id: '1', version_then: 1, version_now: null, gone: true }])
    expect(env(run).error.message).toContain('1')
  })

  it('a drifted version names the target with its versions then and now', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--title', 'mine'])
    const other = await dryRun(box(), ['edit', '1', '--status', 'done'])
    expect((await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', other])).code).toBe(0)
    const run = await tasks(box(), ['edit', '1', '--title', 'mine', '--confirm', token])
    expectRefused(run, 'state_drift')
    expect(env(run).error.details.drift).toEqual([{ id: '1', version_then: 1, version_now: 2, gone: false }])
    // Run the dry_run_command as printed (the tool is on PATH here): a fresh preview and token for the same call.
    const next = (env(run).error.details.dry_run_command as string).split(' ')
    expect(next.slice(0, 5)).toEqual(['tasks', 'edit', '1', '--title', 'mine'])
    const again = await tasks(box(), next.slice(1))
    expect(env(again).data.confirm_token).toMatch(/^ct_3\./)
  })
})

describe('no environment variable moves the clock', () => {
  it('AGENTCLI_NOW is ignored: it neither backdates a token nor revives an expired one', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const past = { AGENTCLI_NOW: String(Date.now() - 60 * 60_000) }
    const dry = await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run'], { env: past })
    expect(Math.abs(Date.parse(env(dry).data.expires_at) - (Date.now() + 600_000))).toBeLessThan(60_000)
    const expired = await dryRun(box(), ['edit', '1', '--status', 'done'], shiftedClock(-11 * 60_000))
    const revive = { AGENTCLI_NOW: String(Date.now() - 10 * 60_000) }
    expectRefused(
      await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', expired], { env: revive }),
      'expired',
    )
  })

  it('the shipped code carries no clock override', () => {
    for (const file of ['dist/write-command.js', 'dist/write/plan.js', 'examples/tasks/dist/bundle.cjs'])
      expect(readFileSync(join(ROOT, file), 'utf8')).not.toContain('AGENTCLI_NOW')
  })
})

describe('the single-use ledger fails closed', () => {
  it('sixteen confirms of one token with the ledger replaced by a file: all E_IO, nothing written', async () => {
    const token = await dryRun(box(), ['create', '--title', 'x'])
    writeFileSync(join(dataDir(box()), 'confirm-ledger'), 'a file')
    const runs = await Promise.all(
      Array.from({ length: 16 }, () => tasks(box(), ['create', '--title', 'x', '--confirm', token])),
    )
    expect(runs.map((r) => r.code)).toEqual(Array(16).fill(1))
    expect(runs.every((r) => env(r).error.code === 'E_IO')).toBe(true)
    expect(storeBytes(box())).toBe('<absent>')
  })

  it('a deleted ledger is recreated and still single-use', async () => {
    const token = await dryRun(box(), ['create', '--title', 'x'])
    rmSync(join(dataDir(box()), 'confirm-ledger'), { recursive: true, force: true })
    expect((await tasks(box(), ['create', '--title', 'x', '--confirm', token])).code).toBe(0)
    expectRefused(await tasks(box(), ['create', '--title', 'x', '--confirm', token]), 'already_used')
  })

  it('a read-only data dir (as nobody): E_IO at once with the path and a fix, the token still good', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    giveToNobody(box())
    const dry = await tasksAsNobody(box(), ['edit', '1', '--status', 'done', '--dry-run'])
    expect(dry.code, dry.stdout + dry.stderr).toBe(0)
    const token = env(dry).data.confirm_token
    const before = storeBytes(box())
    chmodSync(dataDir(box()), 0o500)
    const run = await tasksAsNobody(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expect(run.code, run.stdout).toBe(1)
    expect(env(run).error).toMatchObject({ code: 'E_IO', details: { path: expect.stringContaining(dataDir(box())) } })
    expect(env(run).error.details.fix).toEqual(expect.any(String))
    expect(run.ms).toBeLessThan(5000)
    expect(storeBytes(box())).toBe(before)
    chmodSync(dataDir(box()), 0o700)
    const again = await tasksAsNobody(box(), ['edit', '1', '--status', 'done', '--confirm', token])
    expect(again.code, again.stdout).toBe(0)
  })

  it('a read-only ledger directory (as nobody) is E_IO, not a write without single use', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    giveToNobody(box())
    const token = env(await tasksAsNobody(box(), ['create', '--title', 'x', '--dry-run'])).data.confirm_token
    const ledger = join(dataDir(box()), 'confirm-ledger')
    mkdirSync(ledger)
    chownSync(ledger, NOBODY.uid, NOBODY.gid)
    chmodSync(ledger, 0o500)
    const before = storeBytes(box())
    const run = await tasksAsNobody(box(), ['create', '--title', 'x', '--confirm', token])
    expect(run.code, run.stdout).toBe(1)
    expect(env(run).error).toMatchObject({ code: 'E_IO', details: { path: ledger } })
    expect(storeBytes(box())).toBe(before)
  })
})

describe('the confirm secret in a directory others can write', () => {
  it('is refused with E_CONFIG and the fix, a group-writable one too', async () => {
    await dryRun(box(), ['create', '--title', 'x'])
    chmodSync(configDir(box()), 0o777)
    const run = await tasks(box(), ['create', '--title', 'x', '--dry-run'])
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIG',
      details: { path: configDir(box()), mode: '777', fix: expect.stringMatching(/^chmod (700|go-w) /) },
    })
    chmodSync(configDir(box()), 0o770)
    const group = await tasks(box(), ['create', '--title', 'x', '--dry-run'])
    expect(group.code).toBe(4)
    expect(env(group).error).toMatchObject({
      code: 'E_CONFIG',
      details: { path: configDir(box()), mode: '770', fix: expect.stringContaining(configDir(box())) },
    })
    chmodSync(configDir(box()), 0o700)
    expect((await tasks(box(), ['create', '--title', 'x', '--dry-run'])).code).toBe(0)
  })
})

async function jobDone(b: Sandbox, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const data = env(await tasks(b, ['job', 'status', '--id', id])).data
    if (['succeeded', 'failed', 'cancelled'].includes(data.status)) return data
    await new Promise((r) => setTimeout(r, 150))
  }
  throw new Error(`job ${id} did not finish`)
}

describe('an async write applies what was previewed, or nothing', () => {
  it('a file swapped after the confirm fails the job with E_CONFLICT and imports nothing', async () => {
    const path = join(box().root, 'in.jsonl')
    let checked = false
    for (let round = 0; round < 5 && !checked; round++) {
      writeFileSync(path, '{"title":"previewed"}\n')
      const token = await dryRun(box(), ['import', '--file', path])
      // The worker starts late (a preload), so the lock below is taken before it can claim the job.
      const submit = await tasks(box(), ['import', '--file', path, '--confirm', token], {
        env: { NODE_OPTIONS: `--import ${join(ROOT, 'test/fixtures/slow-worker.mjs')}` },
      })
      expect(submit.code, submit.stdout).toBe(0)
      const id = env(submit).data.job_id as string
      // Hold the job's lock so the worker cannot claim it until the file is swapped.
      const lock = join(dataDir(box()), 'jobs', id, 'job.json.lock')
      let locked = false
      try {
        mkdirSync(lock)
        locked = true
      } catch {}
      const record = JSON.parse(readFileSync(join(dataDir(box()), 'jobs', id, 'job.json'), 'utf8'))
      if (locked && record.status === 'pending')
        writeFileSync(path, `${Array.from({ length: 50 }, (_, i) => `{"title":"never previewed ${i}"}`).join('\n')}\n`)
      if (locked) rmSync(lock, { recursive: true })
      const done = await jobDone(box(), id)
      // A worker that claimed the job before the lock was taken saw the previewed bytes: try another round.
      if (!locked || record.status !== 'pending') continue
      checked = true
      expect(done.status).toBe('failed')
      expect(done.error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'state_drift' } })
    }
    expect(checked).toBe(true)
    const titles = env(await tasks(box(), ['list', '--limit', '100'])).data.items.map((t: { title: string }) => t.title)
    expect(titles.filter((t: string) => t.startsWith('never previewed'))).toEqual([])
  })

  it('a job record without a confirmed plan is refused by the worker', async () => {
    const path = join(box().root, 'in.jsonl')
    writeFileSync(path, '{"title":"smuggled"}\n')
    const store = fileJobStore(dataDir(box()))
    const _now = new Date().toISOString()
    const id = newJobId()
    await store.create(jobRecord({ job_id: id, command: 'import', argv: ['--file', path] }))
    await tasks(box(), ['job', 'worker', '--id', id])
    const done = await jobDone(box(), id)
    expect(done.error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'unverified_job' } })
    expect(env(await tasks(box(), ['list'])).data.count).toBe(0)
  })

  it('the unchanged file imports exactly the previewed lines', async () => {
    const path = join(box().root, 'in.jsonl')
    writeFileSync(path, '{"title":"one"}\n{"title":"two","status":"done"}\n')
    const token = await dryRun(box(), ['import', '--file', path])
    const id = env(await tasks(box(), ['import', '--file', path, '--confirm', token])).data.job_id
    expect(await jobDone(box(), id)).toMatchObject({ status: 'succeeded' })
    const items = env(await tasks(box(), ['list'])).data.items
    expect(items.map((t: { title: string; status: string }) => [t.title, t.status])).toEqual([
      ['one', 'open'],
      ['two', 'done'],
    ])
  })
})

describe('idempotency is per principal and not poisoned by a failure that changed nothing', () => {
  it("another account, another profile, no token or a forged token never get ann's recorded result", async () => {
    const ann = { TASKS_TOKEN: 'tok-ann', TASKS_ACCOUNT: 'ann' }
    const token = await dryRun(box(), ['create', '--title', 'once', '--idempotency-key', 'k1'], ann)
    const first = await tasks(box(), ['create', '--title', 'once', '--idempotency-key', 'k1', '--confirm', token], {
      env: ann,
    })
    expect(first.code).toBe(0)
    const bare = ['create', '--title', 'once', '--idempotency-key', 'k1']
    for (const other of [{ TASKS_TOKEN: 'tok-bob', TASKS_ACCOUNT: 'bob' }, { ...ann, TASKS_PROFILE: 'prod' }, {}]) {
      const run = await tasks(box(), bare, { env: other })
      expect(run.code, run.stdout).toBe(5)
      expect(env(run).meta.replayed).toBeUndefined()
    }
    expectRefused(await tasks(box(), [...bare, '--confirm', 'ct_forged'], { env: ann }), 'tampered')
    const bob = { TASKS_TOKEN: 'tok-bob', TASKS_ACCOUNT: 'bob' }
    expectRefused(await tasks(box(), [...bare, '--confirm', token], { env: bob }), 'other_account')
    // Ann herself gets the replay, and the audit log says it was one.
    const replay = await tasks(box(), bare, { env: ann })
    expect(replay.code).toBe(0)
    expect(env(replay).meta.replayed).toBe(true)
    expect(env(replay).data).toEqual(env(first).data)
    expect(auditLines(box()).at(-1)).toMatchObject({ mode: 'replay', account: 'ann', result_code: 'OK' })
    expect(env(await tasks(box(), ['list'])).data.count).toBe(1)
  })

  it('a store error before any write leaves the key and the token usable', async () => {
    const token = await dryRun(box(), ['create', '--title', 't', '--idempotency-key', 'k2'])
    const idem = join(dataDir(box()), 'idempotency')
    writeFileSync(idem, 'not a directory')
    const args = ['create', '--title', 't', '--idempotency-key', 'k2', '--confirm', token]
    const failed = await tasks(box(), args)
    expect(failed.code).toBe(1)
    expect(env(failed).error).toMatchObject({ code: 'E_IO', details: { fix: expect.any(String) } })
    rmSync(idem)
    const retry = await tasks(box(), args)
    expect(retry.code, retry.stdout).toBe(0)
    expect(env(retry).meta.replayed).toBeUndefined()
    expect(env(await tasks(box(), ['list'])).data.count).toBe(1)
  })

  it('a lock timeout on the store before any write: retryable, and the retry with the same token works', async () => {
    const token = await dryRun(box(), ['create', '--title', 't', '--idempotency-key', 'k3'])
    const lock = `${storePath(box())}.lock`
    mkdirSync(lock, { recursive: true })
    const fresh = setInterval(() => utimesSync(lock, new Date(), new Date()), 1000)
    const args = ['create', '--title', 't', '--idempotency-key', 'k3', '--confirm', token]
    let failed: ToolRun
    try {
      failed = await tasks(box(), args, { timeoutMs: 30_000 })
    } finally {
      clearInterval(fresh)
      rmSync(lock, { recursive: true, force: true })
    }
    expect(failed.code).toBe(8)
    expect(env(failed).error).toMatchObject({ code: 'E_TIMEOUT', retryable: true })
    const retry = await tasks(box(), args)
    expect(retry.code, retry.stdout).toBe(0)
    expect(env(await tasks(box(), ['list'])).data.count).toBe(1)
  }, 40_000)
})

describe('a token binding without the secret', () => {
  it('a token minted with a guessed secret for the exact binding is refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await dryRun(box(), ['edit', '1', '--status', 'done'])
    const { token } = mintToken(
      Buffer.alloc(32, 7),
      {
        tool: 'tasks\0tasks-example',
        command: 'edit',
        args: { id: '1', status: 'done' },
        principal: { account: null, scopes: null, profile: 'default', os_user: 'root', credential: null },
      },
      [{ id: '1', version: 1 }],
      Date.now(),
      600_000,
    )
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'tampered')
  })
})
