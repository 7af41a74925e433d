import { describe, expect, it } from 'vitest'
import { env, fixture, useSandbox } from '../../support/helpers.js'

/*
 * --fields on what a job worker prints (a process of its own). Everything else of --fields runs in-process:
 * test/unit/output/fields.test.ts.
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

describe('--fields on union and untyped outputs', () => {
  it('job result (untyped) accepts any path and projects what exists', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '50'])).data
    await until(
      async () => env(await fixture(box(), ['job', 'status', '--id', job.job_id])).data,
      (s) => s.status === 'succeeded',
    )
    const run = await fixture(box(), ['job', 'result', '--id', job.job_id, '--fields', 'slept_ms,not_there'])
    expect(run.code).toBe(0)
    expect(env(run).data).toEqual({ slept_ms: 50 })
  })
})

describe('--fields names what the call prints', () => {
  it('with --wait, the fields of the job result; without, those of the submission', async () => {
    const waited = await fixture(box(), ['sleepy', '--ms', '50', '--wait', '--fields', 'slept_ms'])
    expect(waited.code, waited.stdout).toBe(0)
    expect(env(waited).data).toEqual({ slept_ms: 50 })
    const wrong = await fixture(box(), ['sleepy', '--ms', '50', '--wait', '--fields', 'job_id'])
    expect(wrong.code).toBe(2)
    expect(env(wrong).error).toMatchObject({ code: 'E_VALIDATION', details: { allowed: ['slept_ms'], got: 'job_id' } })
    const submitted = await fixture(box(), ['sleepy', '--ms', '50', '--fields', 'job_id'])
    expect(submitted.code, submitted.stdout).toBe(0)
    expect(Object.keys(env(submitted).data)).toEqual(['job_id'])
  })
})
