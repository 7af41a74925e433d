import { chmodSync, chownSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runTool, type Sandbox, type ToolRun } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { fileJobStore, newJobId } from '../../../src/jobs/file-store.js'
import { giveToNobody, NOBODY, tasksAsNobody } from '../../support/as-nobody.js'
import { editJson, useToolCopy } from '../../support/copy.js'
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
import { tasksInProcess, tasksJobDone } from '../../support/in-process.js'

/*
 * The token and ledger cases that need a process of their own: a shifted clock (a preload), a hook that reads
 * process.env, another OS user, concurrent processes, a job worker, a lock kept fresh in real time. The rest runs
 * in-process: test/unit/write/write-trust.test.ts. Here too, a call that needs no process of its own (a dry-run
 * at the real clock, a refusal checked after a preloaded dry-run, a job's status polls) runs in-process.
 */
const box = useSandbox()
const copy = useToolCopy()

async function dryRun(b: Sandbox, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const run = await tasks(b, [...args, '--dry-run'], { env: extraEnv })
  expect(run.code, run.stdout + run.stderr).toBe(0)
  return env(run).data.confirm_token as string
}

/** A dry-run's token, minted in-process (the real clock, the run's own env). */
async function dryRunInProcess(b: Sandbox, args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const run = await tasksInProcess(b, [...args, '--dry-run'], { env: extraEnv })
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
  it('a token issued in the future (a clock set ahead at dry-run) is refused', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const token = await dryRun(box(), ['edit', '1', '--status', 'done'], shiftedClock(5 * 60_000))
    const before = storeBytes(box())
    expectRefused(await tasksInProcess(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'not_yet_valid')
    expect(storeBytes(box())).toBe(before)
  })
})

describe('the check order leaks nothing', () => {
  it('a garbage, forged, expired or foreign token is E_CONFLICT before any state is read', async () => {
    // The store is corrupt: any read of it would answer E_IO, so exit 6 proves no read happened.
    mkdirSync(dataDir(box()), { recursive: true })
    const token = await dryRunInProcess(box(), ['create', '--title', 'x'])
    const stale = await dryRun(box(), ['create', '--title', 'x'], shiftedClock(-11 * 60_000))
    const foreign = await dryRunInProcess(box(), ['create', '--title', 'x'], { TASKS_ACCOUNT: 'eve', TASKS_TOKEN: 'e' })
    writeFileSync(storePath(box()), '{ corrupt')
    const cases: Array<[string[], string]> = [
      [['edit', '9', '--status', 'done', '--confirm', 'ct_garbage'], 'tampered'],
      [['delete', '9', '--confirm', 'ct_3.e30.AAAA'], 'tampered'],
      [['edit', '9', '--status', 'done', '--confirm', token], 'other_command'],
      [['create', '--title', 'y', '--confirm', token], 'args_changed'],
      [['create', '--title', 'x', '--confirm', stale], 'expired'],
      [['create', '--title', 'x', '--confirm', foreign], 'other_account'],
    ]
    for (const [args, reason] of cases) expectRefused(await tasksInProcess(box(), args), reason)
    // The same call with the genuine token does read the store, and says it is corrupt.
    const genuine = await tasksInProcess(box(), ['create', '--title', 'x', '--confirm', token])
    expect(genuine.code).toBe(1)
    expect(env(genuine).error.code).toBe('E_IO')
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
})

describe('the single-use ledger fails closed', () => {
  it('sixteen confirms of one token with the ledger replaced by a file: all E_IO, nothing written', async () => {
    const token = await dryRunInProcess(box(), ['create', '--title', 'x'])
    writeFileSync(join(dataDir(box()), 'confirm-ledger'), 'a file')
    const runs = await Promise.all(
      Array.from({ length: 16 }, () => tasks(box(), ['create', '--title', 'x', '--confirm', token])),
    )
    expect(runs.map((r) => r.code)).toEqual(Array(16).fill(1))
    expect(runs.every((r) => env(r).error.code === 'E_IO')).toBe(true)
    expect(storeBytes(box())).toBe('<absent>')
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
      const done = await tasksJobDone(box(), id)
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
    const done = await tasksJobDone(box(), id)
    expect(done.error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'unverified_job' } })
    expect(env(await tasksInProcess(box(), ['list'])).data.count).toBe(0)
  })

  it('the unchanged file imports exactly the previewed lines', async () => {
    const path = join(box().root, 'in.jsonl')
    writeFileSync(path, '{"title":"one"}\n{"title":"two","status":"done"}\n')
    const token = await dryRunInProcess(box(), ['import', '--file', path])
    const id = env(await tasks(box(), ['import', '--file', path, '--confirm', token])).data.job_id
    expect(await tasksJobDone(box(), id)).toMatchObject({ status: 'succeeded' })
    const items = env(await tasksInProcess(box(), ['list'])).data.items
    expect(items.map((t: { title: string; status: string }) => [t.title, t.status])).toEqual([
      ['one', 'open'],
      ['two', 'done'],
    ])
  })
})

describe('idempotency is per principal and not poisoned by a failure that changed nothing', () => {
  it('a lock timeout on the store before any write: retryable, and the retry with the same token works', async () => {
    // The example with its author's lock wait set to 1 s (package.json, never the environment): the same timeout,
    // met without 10 s of real waiting.
    const bin = join(
      copy('examples/tasks', (dir) =>
        editJson(join(dir, 'package.json'), (pjson) => {
          ;(pjson.agentcli as Record<string, unknown>).locks = { timeout_ms: 1000 }
        }),
      ),
      'bin/run.js',
    )
    const inCopy = (args: string[]) => runTool(bin, args, { env: box().env, timeoutMs: 30_000 })
    const dry = await inCopy(['create', '--title', 't', '--idempotency-key', 'k3', '--dry-run'])
    expect(dry.code, dry.stdout + dry.stderr).toBe(0)
    const token = env(dry).data.confirm_token as string
    const lock = `${storePath(box())}.lock`
    mkdirSync(lock, { recursive: true })
    const fresh = setInterval(() => utimesSync(lock, new Date(), new Date()), 1000)
    const args = ['create', '--title', 't', '--idempotency-key', 'k3', '--confirm', token]
    let failed: ToolRun
    try {
      failed = await inCopy(args)
    } finally {
      clearInterval(fresh)
      rmSync(lock, { recursive: true, force: true })
    }
    expect(failed.code).toBe(8)
    expect(env(failed).error).toMatchObject({ code: 'E_TIMEOUT', retryable: true })
    const retry = await inCopy(args)
    expect(retry.code, retry.stdout).toBe(0)
    expect(env(await inCopy(['list'])).data.count).toBe(1)
  }, 40_000)
})
