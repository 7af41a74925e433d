import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { backgroundWork, endWorkers, liveWorkers, settleWorkers } from '../../../src/jobs/end-workers.js'
import { processIdentity } from '../../../src/jobs/liveness.js'
import { sandbox } from '../../../src/testing/run-tool.js'

// verify's sandbox and agentcli/testing's sandbox() end the job workers started under them before they are removed: a
// detached worker outlived verify and wrote into its removed home (seen: the guide's tool, a lock file gone mid-walk,
// a sandbox recreated after its removal), and the spawn tier left one or two such homes in /tmp per run.
const made: string[] = []
const started: ChildProcess[] = []
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A real process standing in for a job worker; `stubborn` ignores SIGTERM. */
async function worker(stubborn = false): Promise<{ child: ChildProcess; exited: Promise<NodeJS.Signals | null> }> {
  const code = `${stubborn ? "process.on('SIGTERM', () => {});" : ''} setInterval(() => {}, 1000); console.log('up')`
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'] })
  started.push(child)
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
  await new Promise((resolve) => child.stdout!.once('data', resolve))
  return { child, exited }
}

function data(records: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'verify-workers-'))
  made.push(dir)
  for (const [id, record] of Object.entries(records)) {
    mkdirSync(join(dir, 'mytool', 'jobs', id), { recursive: true })
    writeFileSync(
      join(dir, 'mytool', 'jobs', id, 'job.json'),
      typeof record === 'string' ? record : JSON.stringify(record),
    )
  }
  return dir
}

describe.skipIf(process.platform !== 'linux')('the job workers of a throw-away home', () => {
  it('ends a running worker with SIGTERM, one that ignores it with SIGKILL after the grace', async () => {
    const polite = await worker()
    const stubborn = await worker(true)
    const dir = data({
      job_a: { status: 'running', worker_pid: polite.child.pid, worker_start: processIdentity(polite.child.pid!) },
      job_b: { status: 'running', worker_pid: stubborn.child.pid, worker_start: processIdentity(stubborn.child.pid!) },
    })
    expect(liveWorkers(dir).sort()).toEqual([polite.child.pid, stubborn.child.pid].sort())
    expect(endWorkers(dir, 300).sort()).toEqual([polite.child.pid, stubborn.child.pid].sort())
    expect(await polite.exited).toBe('SIGTERM')
    expect(await stubborn.exited).toBe('SIGKILL')
  })

  it('names no process whose start time differs (a reused PID), nor a record without a live worker', async () => {
    const other = await worker()
    const dir = data({
      job_reused: { status: 'running', worker_pid: other.child.pid, worker_start: '1' },
      job_unclaimed: { status: 'queued', worker_pid: null, worker_start: null },
      job_torn: '{"status":"runn',
    })
    mkdirSync(join(dir, 'mytool', 'jobs', 'job_empty'))
    expect(endWorkers(dir, 100)).toEqual([])
    expect(other.child.exitCode).toBeNull()
    expect(other.child.signalCode).toBeNull()
    expect(endWorkers(join(dir, 'absent'), 100)).toEqual([])
  })

  it("agentcli/testing's sandbox().cleanup() ends the workers under it before removing it", async () => {
    const w = await worker()
    const box = sandbox('end-workers-')
    const job = join(box.env.XDG_DATA_HOME!, 'mytool', 'jobs', 'job_a')
    mkdirSync(job, { recursive: true })
    writeFileSync(
      join(job, 'job.json'),
      JSON.stringify({ worker_pid: w.child.pid, worker_start: processIdentity(w.child.pid!) }),
    )
    box.cleanup()
    expect(await w.exited).toBe('SIGTERM')
    expect(existsSync(box.root)).toBe(false)
  })

  it('counts the jobs that still await work: running with a live worker, pending with its worker on the way', async () => {
    const w = await worker()
    const now = Date.parse('2026-12-03T12:00:00Z')
    const at = (ms: number) => new Date(now - ms).toISOString()
    const dir = data({
      job_running: { status: 'running', worker_pid: w.child.pid, worker_start: processIdentity(w.child.pid!) },
      job_dead: { status: 'running', worker_pid: w.child.pid, worker_start: '1' },
      job_claiming: { status: 'pending', worker_pid: null, worker_start: null, submitted_at: at(2_000) },
      job_abandoned: { status: 'pending', worker_pid: null, worker_start: null, submitted_at: at(11_000) },
      job_done: { status: 'succeeded', worker_pid: w.child.pid, worker_start: processIdentity(w.child.pid!) },
    })
    expect(backgroundWork(dir, now)).toEqual({ live: [w.child.pid, w.child.pid], awaited: 2, claiming: 1 })
  })

  it('settling waits for a worker that finishes its job, and ends one that outlasts the wait', async () => {
    // The finishing worker marks its job succeeded after a moment and exits, as a job worker does.
    const dir = data({})
    const job = join(dir, 'mytool', 'jobs', 'job_quick')
    mkdirSync(job, { recursive: true })
    const record = join(job, 'job.json')
    const finish = `setTimeout(() => { require('node:fs').writeFileSync(${JSON.stringify(record)}, '{"status":"succeeded"}'); process.exit(0) }, 300)`
    const quick = spawn(process.execPath, ['-e', `${finish}; console.log('up')`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    started.push(quick)
    const quickExit = new Promise<number | null>((resolve) => quick.on('exit', (code) => resolve(code)))
    await new Promise((resolve) => quick.stdout!.once('data', resolve))
    writeFileSync(
      record,
      JSON.stringify({ status: 'running', worker_pid: quick.pid, worker_start: processIdentity(quick.pid!) }),
    )
    expect(await settleWorkers(dir, 20_000)).toEqual([])
    expect(await quickExit).toBe(0)

    const slow = await worker()
    writeFileSync(
      record,
      JSON.stringify({ status: 'running', worker_pid: slow.child.pid, worker_start: processIdentity(slow.child.pid!) }),
    )
    expect(await settleWorkers(dir, 100)).toEqual([slow.child.pid])
    expect(await slow.exited).toBe('SIGTERM')
  })

  it('settling waits for a worker whose job already says it finished, until the worker has exited', async () => {
    // A job worker marks its job succeeded, then writes its call's audit line as its process ends: a snapshot taken
    // between the two would blame that line on the next call.
    const dir = data({})
    const job = join(dir, 'mytool', 'jobs', 'job_ending')
    mkdirSync(job, { recursive: true })
    const audit = join(dir, 'mytool', 'audit.jsonl')
    const ending = `setTimeout(() => { require('node:fs').appendFileSync(${JSON.stringify(audit)}, '{}\\n'); process.exit(0) }, 300)`
    const child = spawn(process.execPath, ['-e', `${ending}; console.log('up')`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    started.push(child)
    await new Promise((resolve) => child.stdout!.once('data', resolve))
    writeFileSync(
      join(job, 'job.json'),
      JSON.stringify({ status: 'succeeded', worker_pid: child.pid, worker_start: processIdentity(child.pid!) }),
    )
    expect(await settleWorkers(dir, 20_000)).toEqual([])
    expect(existsSync(audit)).toBe(true)
  })

  it('gives a worker on its way the grace to claim its job, then ends it', async () => {
    // As a submit leaves it: the job pending, its worker started but not yet in the record.
    const dir = data({})
    const record = join(dir, 'mytool', 'jobs', 'job_new', 'job.json')
    mkdirSync(dirname(record), { recursive: true })
    writeFileSync(
      record,
      JSON.stringify({
        status: 'pending',
        worker_pid: null,
        worker_start: null,
        submitted_at: new Date().toISOString(),
      }),
    )
    const claim = `const fs = require('node:fs'); const start = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[19]
setTimeout(() => fs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({ status: 'running', worker_pid: process.pid, worker_start: start })), 200)
setInterval(() => {}, 1000)`
    const late = spawn(process.execPath, ['-e', claim], { stdio: 'ignore' })
    started.push(late)
    const exited = new Promise<NodeJS.Signals | null>((resolve) => late.on('exit', (_code, signal) => resolve(signal)))
    expect(endWorkers(dir, 20_000)).toEqual([late.pid])
    expect(await exited).toBe('SIGTERM')
  })
})
