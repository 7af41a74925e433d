import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, FIXTURE_BIN, fixture, seed, storeBytes, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess, tasksInProcess } from '../../support/in-process.js'
import { schemaValidator } from '../../support/schema.js'

/*
 * Long work through real processes: a stream cut by a closed pipe, async jobs run by a detached worker (submitted,
 * polled, cancelled, killed, in parallel), imports run as jobs. Streams, an unknown job id, an import's token and
 * human checkpoints run in-process: test/unit/output/ndjson-streams.test.ts, test/unit/jobs/long-work.test.ts,
 * test/unit/checkpoints/login-checkpoint.test.ts.
 */
const box = useSandbox()

function lines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const start = Date.now()
  for (;;) {
    const value = await probe()
    if (done(value) || Date.now() - start > timeoutMs) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const status = async (b: Sandbox, id: string, run = fixture) => env(await run(b, ['job', 'status', '--id', id])).data
/*
 * The job's worker, the submits and what a test says other processes do are processes of their own; a poll loop
 * and a read of a job's outcome only read its record, so they run in this process (`run(root, { io })`).
 */
const polled = (b: Sandbox, id: string, run = fixtureInProcess) => status(b, id, run)

describe('NDJSON streams', () => {
  it('`tasks export | head -1` exits cleanly', () => {
    seed(
      box(),
      Array.from({ length: 3000 }, (_, i) => ({ id: String(i + 1), title: `task ${i + 1} ${'x'.repeat(80)}` })),
    )
    const script = `"${process.execPath}" "${TASKS_BIN}" export | head -1; echo "status=\${PIPESTATUS[0]}"`
    const result = spawnSync('bash', ['-c', script], { env: { ...process.env, ...box().env }, encoding: 'utf8' })
    const [first, statusLine] = result.stdout.trimEnd().split('\n')
    expect(JSON.parse(first!)).toMatchObject({ type: 'item', data: { id: '1' } })
    expect(statusLine).toBe('status=0')
    expect(result.stderr).toBe('')
  })
})

describe('async jobs', () => {
  it('submits at once with poll and result commands; the job runs detached and succeeds', async () => {
    const submit = await fixture(box(), ['sleepy', '--ms', '200'])
    expect(submit.code).toBe(0)
    const job = env(submit).data
    expect(job).toEqual({
      job_id: expect.stringMatching(/^job_/),
      status: 'pending',
      // The fixture is not on PATH: hints start the way it was started (`node <script>`), runnable as printed.
      poll: expect.stringMatching(new RegExp(`^\\S*node ${FIXTURE_BIN} job status --id ${job.job_id}$`)),
      result: expect.stringMatching(new RegExp(`^\\S*node ${FIXTURE_BIN} job result --id ${job.job_id}$`)),
    })
    const done = await until(
      () => polled(box(), job.job_id),
      (s) => s.status === 'succeeded',
    )
    expect(done).toMatchObject({ status: 'succeeded', progress: 1, command: 'sleepy' })
    expect(Date.parse(done.finished_at)).toBeGreaterThanOrEqual(Date.parse(done.started_at))
    const result = await fixtureInProcess(box(), ['job', 'result', '--id', job.job_id])
    expect(env(result)).toMatchObject({ ok: true, data: { slept_ms: 200 } })
  })

  it('reports progress while running, and the result of an unfinished job is a clear error', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '3000'])).data
    const running = await until(
      () => polled(box(), job.job_id),
      (s) => s.status === 'running' && s.progress > 0,
    )
    expect(running.progress).toBeGreaterThan(0)
    expect(running.progress).toBeLessThan(1)
    expect(typeof running.eta_seconds).toBe('number')
    const early = await fixtureInProcess(box(), ['job', 'result', '--id', job.job_id])
    expect(early.code).toBe(6)
    expect(env(early).error).toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'job_not_finished', status: 'running', poll: job.poll },
    })
    await fixtureInProcess(box(), ['job', 'cancel', '--id', job.job_id])
  })

  it('a failed job returns its error envelope; retryable says whether to resubmit', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '100', '--fail'])).data
    await until(
      () => polled(box(), job.job_id),
      (s) => s.status === 'failed',
    )
    const result = await fixtureInProcess(box(), ['job', 'result', '--id', job.job_id])
    expect(result.code).toBe(7)
    expect(env(result).error).toMatchObject({ code: 'E_SERVER', retryable: true, details: { job_id: job.job_id } })
  })

  it('large results come back as NDJSON', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '50', '--items', '3'])).data
    await until(
      () => polled(box(), job.job_id),
      (s) => s.status === 'succeeded',
    )
    const out = lines((await fixtureInProcess(box(), ['job', 'result', '--id', job.job_id])).stdout)
    expect(out.map((l) => l.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { count: 3 }])
  })

  it('is polled, cancelled and read by other processes; the worker stops and the state says cancelled', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '20000'])).data
    const running = await until(
      () => status(box(), job.job_id),
      (s) => s.status === 'running',
    )
    expect(running.status).toBe('running')
    const cancel = await fixture(box(), ['job', 'cancel', '--id', job.job_id])
    expect(env(cancel).data.status).toBe('cancelled')
    const ref = env(await fixture(box(), ['reference'])).data
    const validate = schemaValidator().compile(
      ref.commands.find((c: { path: string }) => c.path === 'job cancel').output_schema,
    )
    expect(validate(env(cancel).data)).toBe(true)
    const after = await status(box(), job.job_id)
    expect(after).toMatchObject({ status: 'cancelled', cancel_requested: true })
    const again = await fixture(box(), ['job', 'cancel', '--id', job.job_id])
    expect(env(again).error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'job_finished' } })
    const result = await fixture(box(), ['job', 'result', '--id', job.job_id])
    expect(env(result).error.details.reason).toBe('job_cancelled')
  })

  it('killing the worker mid-job yields failed with a retryable error, never stuck in running', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '20000'])).data
    await until(
      () => polled(box(), job.job_id),
      (s) => s.status === 'running',
    )
    const record = JSON.parse(
      (await import('node:fs')).readFileSync(
        join(box().env.XDG_DATA_HOME!, 'agentcli-fixture', 'jobs', job.job_id, 'job.json'),
        'utf8',
      ),
    )
    process.kill(record.worker_pid, 'SIGKILL')
    const failed = await until(
      () => polled(box(), job.job_id),
      (s) => s.status === 'failed',
    )
    expect(failed.status).toBe('failed')
    expect(failed.error).toMatchObject({ code: 'E_INTERRUPTED', retryable: true })
  })

  it('16 concurrent submits produce 16 distinct jobs, listed newest first with pagination', async () => {
    // Sixteen starts at once on a small, loaded machine: each may wait its turn for a core, so no call is cut short
    // by the per-call kill (a killed call has no envelope), and the test waits as long as they need.
    const runs = await Promise.all(
      Array.from({ length: 16 }, () => fixture(box(), ['sleepy', '--ms', '50'], { timeoutMs: 150_000 })),
    )
    const ids = runs.map((r) => env(r).data.job_id)
    expect(new Set(ids).size).toBe(16)
    const page = env(await fixture(box(), ['job', 'list', '--limit', '10'])).data
    expect(page).toMatchObject({ count: 10, has_more: true })
    const rest = env(await fixture(box(), ['job', 'list', '--limit', '10', '--cursor', page.next_cursor])).data
    expect(new Set([...page.items, ...rest.items].map((j: { job_id: string }) => j.job_id))).toEqual(new Set(ids))
    const all = [...page.items, ...rest.items].map((j: { submitted_at: string }) => j.submitted_at)
    expect(all).toEqual([...all].sort().reverse())
  }, 180_000)
})

describe('tasks import (an async write job)', () => {
  function file(b: Sandbox, text: string): string {
    const path = join(b.root, 'in.jsonl')
    writeFileSync(path, text)
    return path
  }

  async function confirmImport(b: Sandbox, path: string) {
    const dry = await tasksInProcess(b, ['import', '--file', path, '--dry-run'])
    expect(env(dry).data.preview.changes[0]).toMatchObject({ action: 'import', after: { lines: expect.any(Number) } })
    return env(await tasks(b, ['import', '--file', path, '--confirm', env(dry).data.confirm_token])).data
  }

  it('is submitted only after dry-run → confirm, then imports every line', async () => {
    const path = file(
      box(),
      `${Array.from({ length: 1200 }, (_, i) => JSON.stringify({ title: `t${i}` })).join('\n')}\n`,
    )
    const refused = await tasks(box(), ['import', '--file', path])
    expect(refused.code).toBe(5)
    const job = await confirmImport(box(), path)
    expect(job.status).toBe('pending')
    const done = await until(
      () => polled(box(), job.job_id, tasksInProcess),
      (s) => s.status === 'succeeded',
    )
    expect(done.status).toBe('succeeded')
    const result = env(await tasksInProcess(box(), ['job', 'result', '--id', job.job_id])).data
    expect(result.imported).toBe(1200)
    expect(env(await tasksInProcess(box(), ['list'])).data.has_more).toBe(true)
  })

  it('a malformed line fails the job with its line number, and no task is written', async () => {
    seed(box(), [{ id: '1', title: 'kept' }])
    const before = storeBytes(box())
    const path = file(box(), '{"title":"a"}\n{"title":"b"}\n{"title": 7}\n{"title":"d"}\n')
    const job = await confirmImport(box(), path)
    const failed = await until(
      () => polled(box(), job.job_id, tasksInProcess),
      (s) => s.status === 'failed',
    )
    expect(failed.error).toMatchObject({ code: 'E_VALIDATION', details: { line: 3 } })
    expect(storeBytes(box())).toBe(before)
    const result = await tasksInProcess(box(), ['job', 'result', '--id', job.job_id])
    expect(result.code).toBe(2)
  })
})
