import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, fixture, tasks, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess, tasksInProcess } from '../../support/in-process.js'

/*
 * Jobs and checkpoints under concurrency and against real processes: parallel cancels of a running worker, parallel
 * resumes. Corrupt job records, a cancel that must not signal an unrelated process and a resume's claim run
 * in-process: test/unit/jobs/jobs-robust.test.ts, test/unit/checkpoints/resume-claim.test.ts. Here too, what is no
 * part of a race (polls, the steps before and after it) runs in-process; the worker and the racing calls are
 * processes.
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

const status = async (b: Sandbox, id: string) => env(await fixtureInProcess(b, ['job', 'status', '--id', id])).data

describe('concurrent job cancel', () => {
  it('parallel cancels of one running job all answer cancelled, and the job ends cancelled (4 at once)', async () => {
    // One round: rounds were the same race from the same start (a fresh job, four cancels sent together while its
    // worker lingers), and in all 10 rounds measured the four overlapped and answered cancelled alike.
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
    expect(after).toMatchObject({ status: 'cancelled', cancel_requested: true, error: null })
  }, 90_000)
})

describe('a human checkpoint is single-use', () => {
  it('4 parallel resumes of one approved checkpoint: exactly one wins, the others are E_CONFLICT (3 rounds)', async () => {
    // A loser finds the checkpoint used, or still being resumed (checkpoint_in_use, the race proper). On two cores,
    // resumes started together spread their arrival in proportion to their number: 4 of them reached the second
    // answer in as many rounds as 8 did (5 in 8 either way, measured), for half the processes.
    for (let round = 0; round < 3; round++) {
      const start = env(await tasksInProcess(box(), ['login'])).error
      const resume = start.details.resume.split(' ').slice(1)
      expect(
        (await tasksInProcess(box(), ['login', 'approve', start.details.user_code, '--account', `ann${round}`])).code,
      ).toBe(0)
      const runs = await Promise.all(Array.from({ length: 4 }, () => tasks(box(), [...resume, '--insecure-storage'])))
      const why = runs.map((r) => `${r.code} ${r.stdout}`).join('\n')
      expect(
        runs.filter((r) => r.code === 0),
        why,
      ).toHaveLength(1)
      for (const lost of runs.filter((r) => r.code !== 0)) {
        expect(lost.code, why).toBe(6)
        expect(['checkpoint_used', 'checkpoint_in_use']).toContain(env(lost).error.details.reason)
      }
      const later = await tasksInProcess(box(), [...resume, '--insecure-storage'])
      expect(env(later).error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'checkpoint_used' } })
      await tasksInProcess(box(), ['logout'])
    }
  }, 120_000)
})
