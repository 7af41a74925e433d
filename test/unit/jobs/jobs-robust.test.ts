// Job records are validated on read: a corrupt or forged record is E_IO naming it, never printed as-is; a cancel
// signals only the worker it started. In-process (test/support/in-process.ts), moved from
// test/cli/jobs/jobs-robust.test.ts with every assertion kept; what needs a worker or concurrent processes stays there.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { alive, env, jobRecord, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture } from '../../support/in-process.js'

const box = useSandbox()

const jobFile = (b: Sandbox, id: string) => join(b.env.XDG_DATA_HOME!, 'agentcli-fixture', 'jobs', id, 'job.json')

/** A record as a worker would have written it, with `patch` applied (to forge or corrupt it). */
function writeRecord(b: Sandbox, id: string, patch: Record<string, unknown>): string {
  const now = new Date().toISOString()
  const path = jobFile(b, id)
  mkdirSync(join(path, '..'), { recursive: true })
  const record = jobRecord({
    job_id: id,
    command: 'sleepy',
    argv: ['--ms', '20000'],
    status: 'running',
    progress: 0.1,
    started_at: now,
    ...patch,
  })
  writeFileSync(path, JSON.stringify(record))
  return path
}

describe('job records are validated on read', () => {
  const ID = 'job_0123456789abcdefghij'
  const corrupt: Array<[string, Record<string, unknown> | string, string]> = [
    ['a status outside the schema', { status: 'hacked' }, 'status'],
    ['a PID of 0 (a process group)', { worker_pid: 0 }, 'worker_pid'],
    ['a negative PID', { worker_pid: -1 }, 'worker_pid'],
    ['progress out of range', { progress: 7 }, 'progress'],
    ['another job id', { job_id: 'job_zzzzzzzzzzzzzzzzzzzz' }, 'job_id'],
    ['not JSON', '{"job_id": ', 'not valid JSON'],
  ]
  it.each(corrupt)('%s is E_IO naming the record, never printed as-is', async (_, patch, problem) => {
    const path =
      typeof patch === 'string'
        ? (() => {
            const p = writeRecord(box(), ID, {})
            writeFileSync(p, patch)
            return p
          })()
        : writeRecord(box(), ID, patch)
    for (const args of [
      ['job', 'status', '--id', ID],
      ['job', 'cancel', '--id', ID],
      ['job', 'result', '--id', ID],
      ['job', 'list'],
    ]) {
      const run = await fixture(box(), args)
      expect(run.code, `${args.join(' ')}: ${run.stdout}`).toBe(1)
      expect(env(run).ok).toBe(false)
      expect(env(run).error.code).toBe('E_IO')
      expect(env(run).error.details.path).toBe(path)
      expect(env(run).error.message).toContain(problem)
      expect(env(run).data).toBeUndefined()
    }
  })
})

/** Start an unrelated process (a bare node, not a worker) that the test owns and ends itself. */
function unrelated(): ChildProcess & { pid: number } {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' })
  return child as ChildProcess & { pid: number }
}

const status = async (b: Sandbox, id: string) => env(await fixture(b, ['job', 'status', '--id', id])).data

describe('job cancel signals only the worker it started', () => {
  it('a record naming an unrelated process without a start time never gets it killed', async () => {
    const victim = unrelated()
    try {
      const ID = 'job_aaaaaaaaaaaaaaaaaaaa'
      writeRecord(box(), ID, { worker_pid: victim.pid, worker_start: null })
      const run = await fixture(box(), ['job', 'cancel', '--id', ID])
      // Unverifiable as our worker: the job is over (its worker is not running), and nothing was signalled.
      expect(run.code, run.stdout).toBe(6)
      expect(env(run).error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'job_finished' } })
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(alive(victim.pid)).toBe(true)
      expect(victim.exitCode).toBeNull()
      expect(victim.signalCode).toBeNull()
    } finally {
      victim.kill('SIGKILL')
    }
  })

  it('a record naming an unrelated process with a start time that is not its own never gets it killed', async () => {
    const victim = unrelated()
    try {
      const ID = 'job_bbbbbbbbbbbbbbbbbbbb'
      writeRecord(box(), ID, { worker_pid: victim.pid, worker_start: '1' })
      const run = await fixture(box(), ['job', 'cancel', '--id', ID])
      expect(run.code, run.stdout).toBe(6)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(alive(victim.pid)).toBe(true)
      expect(victim.signalCode).toBeNull()
      expect((await status(box(), ID)).status).toBe('failed')
    } finally {
      victim.kill('SIGKILL')
    }
  })
})
