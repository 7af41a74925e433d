import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { alive, env, fixture, jobRecord, tasks, useSandbox } from '../../support/helpers.js'

/*
 * Jobs and checkpoints under concurrency and against real processes: parallel cancels of a running worker, a cancel
 * that must not signal an unrelated process, parallel resumes. Corrupt job records and a resume's claim run
 * in-process: test/unit/jobs/jobs-robust.test.ts, test/unit/checkpoints/resume-claim.test.ts.
 */
const box = useSandbox()

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const start = Date.now()
  for (;;) {
    const value = await probe()
    if (done(value) || Date.now() - start > timeoutMs) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const status = async (b: Sandbox, id: string) => env(await fixture(b, ['job', 'status', '--id', id])).data
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

/** Start an unrelated process (not a worker) that the test owns and ends itself. */
function unrelated(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' })
  return child as ChildProcess & { pid: number }
}

describe('concurrent job cancel', () => {
  it('parallel cancels of one running job all answer cancelled, and the job ends cancelled (5 rounds × 4)', async () => {
    for (let round = 0; round < 5; round++) {
      // A worker that takes a moment to wind down, so the cancels overlap while it stops.
      const job = env(await fixture(box(), ['sleepy', '--ms', '20000', '--linger', '1000'])).data
      await until(
        () => status(box(), job.job_id),
        (s) => s.status === 'running',
      )
      const runs = await Promise.all(
        Array.from({ length: 4 }, () => fixture(box(), ['job', 'cancel', '--id', job.job_id])),
      )
      for (const run of runs) {
        // Each answer is coherent: the cancelled job, or (for a cancel that arrived after the end) job_finished.
        if (run.code === 0) expect(env(run).data.status, run.stdout).toBe('cancelled')
        else
          expect(env(run).error, run.stdout).toMatchObject({
            code: 'E_CONFLICT',
            details: { reason: 'job_finished', status: 'cancelled' },
          })
      }
      expect(runs.some((r) => r.code === 0)).toBe(true)
      const after = await status(box(), job.job_id)
      expect(after, `round ${round}`).toMatchObject({ status: 'cancelled', cancel_requested: true, error: null })
    }
  }, 90_000)
})

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

describe('a human checkpoint is single-use', () => {
  it('8 parallel resumes of one approved checkpoint: exactly one wins, the others are E_CONFLICT (3 rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const start = env(await tasks(box(), ['login'])).error
      const resume = start.details.resume.split(' ').slice(1)
      expect((await tasks(box(), ['login', 'approve', start.details.user_code, '--account', `ann${round}`])).code).toBe(
        0,
      )
      const runs = await Promise.all(Array.from({ length: 8 }, () => tasks(box(), [...resume, '--insecure-storage'])))
      const why = runs.map((r) => `${r.code} ${r.stdout}`).join('\n')
      expect(
        runs.filter((r) => r.code === 0),
        why,
      ).toHaveLength(1)
      for (const lost of runs.filter((r) => r.code !== 0)) {
        expect(lost.code, why).toBe(6)
        expect(['checkpoint_used', 'checkpoint_in_use']).toContain(env(lost).error.details.reason)
      }
      const later = await tasks(box(), [...resume, '--insecure-storage'])
      expect(env(later).error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'checkpoint_used' } })
      await tasks(box(), ['logout'])
    }
  }, 120_000)
})
