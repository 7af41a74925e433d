import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, FIXTURE_BIN, fixture, seed, storeBytes, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'
import { schemaValidator } from '../../support/schema.js'

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

describe('NDJSON streams', () => {
  it('prints one item line per element and a summary, every line with ok, schema_version, type', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b', status: 'done' },
    ])
    const run = await tasks(box(), ['export'])
    expect(run.code).toBe(0)
    const out = lines(run.stdout)
    expect(out.map((l) => l.type)).toEqual(['item', 'item', 'summary'])
    for (const l of out) expect(l).toMatchObject({ ok: true, schema_version: '1.0' })
    expect(out[2]!.data).toEqual({ count: 2 })
    expect(out[0]!.data).toMatchObject({ id: '1', title: 'a' })
  })

  it('--fields applies per item; --status filters', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b', status: 'done' },
    ])
    const out = lines((await tasks(box(), ['export', '--fields', 'id', '--status', 'done'])).stdout)
    expect(out.map((l) => l.data)).toEqual([{ id: '2' }, { count: 1 }])
  })

  it('--format raw writes CSV, --format text writes rows', async () => {
    seed(box(), [{ id: '1', title: 'has, comma "quoted"' }])
    const raw = await tasks(box(), ['export', '--format', 'raw'])
    expect(raw.stdout.split('\n').slice(0, 2)).toEqual([
      'id,title,status,created_at,updated_at,version',
      '1,"has, comma ""quoted""",open,2026-01-02T03:04:05.000Z,2026-01-02T03:04:05.000Z,1',
    ])
    const text = await tasks(box(), ['export', '--format', 'text'])
    expect(text.stdout.split('\n')[0]).toMatch(/^ID +TITLE +STATUS +CREATED_AT +UPDATED_AT +VERSION$/)
  })

  it('a failure mid-stream ends with one error line and the catalogue exit code', async () => {
    const run = await fixture(box(), ['count', '--n', '5', '--fail-at', '3'])
    expect(run.code).toBe(7)
    const out = lines(run.stdout)
    expect(out.map((l) => l.type)).toEqual(['item', 'item', 'item', 'error'])
    expect(out[3]).toMatchObject({ ok: false, schema_version: '1.0', error: { code: 'E_SERVER', retryable: true } })
  })

  it('a stream command that fails before its first item still speaks NDJSON: one error line', async () => {
    const run = await tasks(box(), ['export', '--bogus'])
    expect(run.code).toBe(2)
    expect(run.stdout.split('\n').filter(Boolean)).toHaveLength(1)
    expect(lines(run.stdout)[0]).toMatchObject({
      ok: false,
      schema_version: '1.0',
      type: 'error',
      error: { code: 'E_USAGE' },
    })
    // Found by the fuzzer: a bad --format is rejected before the command runs, and still as NDJSON.
    const format = await tasks(box(), ['export', '--format', 'yaml'])
    expect(format.code).toBe(2)
    expect(lines(format.stdout)).toEqual([
      expect.objectContaining({ ok: false, type: 'error', error: expect.objectContaining({ code: 'E_VALIDATION' }) }),
    ])
  })

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

  it('a command that streams nothing still ends with a summary', async () => {
    const out = lines((await tasks(box(), ['export'])).stdout)
    expect(out).toEqual([
      {
        ok: true,
        schema_version: '1.0',
        type: 'summary',
        data: { count: 0 },
        meta: { duration_ms: expect.any(Number) },
      },
    ])
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
      () => status(box(), job.job_id),
      (s) => s.status === 'succeeded',
    )
    expect(done).toMatchObject({ status: 'succeeded', progress: 1, command: 'sleepy' })
    expect(Date.parse(done.finished_at)).toBeGreaterThanOrEqual(Date.parse(done.started_at))
    const result = await fixture(box(), ['job', 'result', '--id', job.job_id])
    expect(env(result)).toMatchObject({ ok: true, data: { slept_ms: 200 } })
  })

  it('reports progress while running, and the result of an unfinished job is a clear error', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '3000'])).data
    const running = await until(
      () => status(box(), job.job_id),
      (s) => s.status === 'running' && s.progress > 0,
    )
    expect(running.progress).toBeGreaterThan(0)
    expect(running.progress).toBeLessThan(1)
    expect(typeof running.eta_seconds).toBe('number')
    const early = await fixture(box(), ['job', 'result', '--id', job.job_id])
    expect(early.code).toBe(6)
    expect(env(early).error).toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'job_not_finished', status: 'running', poll: job.poll },
    })
    await fixture(box(), ['job', 'cancel', '--id', job.job_id])
  })

  it('a failed job returns its error envelope; retryable says whether to resubmit', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '100', '--fail'])).data
    await until(
      () => status(box(), job.job_id),
      (s) => s.status === 'failed',
    )
    const result = await fixture(box(), ['job', 'result', '--id', job.job_id])
    expect(result.code).toBe(7)
    expect(env(result).error).toMatchObject({ code: 'E_SERVER', retryable: true, details: { job_id: job.job_id } })
  })

  it('large results come back as NDJSON', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '50', '--items', '3'])).data
    await until(
      () => status(box(), job.job_id),
      (s) => s.status === 'succeeded',
    )
    const out = lines((await fixture(box(), ['job', 'result', '--id', job.job_id])).stdout)
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
      () => status(box(), job.job_id),
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
      () => status(box(), job.job_id),
      (s) => s.status === 'failed',
    )
    expect(failed.status).toBe('failed')
    expect(failed.error).toMatchObject({ code: 'E_INTERRUPTED', retryable: true })
  })

  it('16 concurrent submits produce 16 distinct jobs, listed newest first with pagination', async () => {
    const runs = await Promise.all(Array.from({ length: 16 }, () => fixture(box(), ['sleepy', '--ms', '50'])))
    const ids = runs.map((r) => env(r).data.job_id)
    expect(new Set(ids).size).toBe(16)
    const page = env(await fixture(box(), ['job', 'list', '--limit', '10'])).data
    expect(page).toMatchObject({ count: 10, has_more: true })
    const rest = env(await fixture(box(), ['job', 'list', '--limit', '10', '--cursor', page.next_cursor])).data
    expect(new Set([...page.items, ...rest.items].map((j: { job_id: string }) => j.job_id))).toEqual(new Set(ids))
    const all = [...page.items, ...rest.items].map((j: { submitted_at: string }) => j.submitted_at)
    expect(all).toEqual([...all].sort().reverse())
  })

  it('an unknown job id is E_NOT_FOUND', async () => {
    for (const args of [
      ['job', 'status', '--id', 'job_nope'],
      ['job', 'result', '--id', 'job_00000000000000000000'],
      ['job', 'cancel', '--id', '../etc'],
    ]) {
      const run = await fixture(box(), args)
      expect(run.code).toBe(3)
      expect(env(run).error.code).toBe('E_NOT_FOUND')
    }
  })
})

describe('tasks import (an async write job)', () => {
  function file(b: Sandbox, text: string): string {
    const path = join(b.root, 'in.jsonl')
    writeFileSync(path, text)
    return path
  }

  async function confirmImport(b: Sandbox, path: string) {
    const dry = await tasks(b, ['import', '--file', path, '--dry-run'])
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
      () => status(box(), job.job_id, tasks),
      (s) => s.status === 'succeeded',
    )
    expect(done.status).toBe('succeeded')
    const result = env(await tasks(box(), ['job', 'result', '--id', job.job_id])).data
    expect(result.imported).toBe(1200)
    expect(env(await tasks(box(), ['list'])).data.has_more).toBe(true)
  })

  it('a malformed line fails the job with its line number, and no task is written', async () => {
    seed(box(), [{ id: '1', title: 'kept' }])
    const before = storeBytes(box())
    const path = file(box(), '{"title":"a"}\n{"title":"b"}\n{"title": 7}\n{"title":"d"}\n')
    const job = await confirmImport(box(), path)
    const failed = await until(
      () => status(box(), job.job_id, tasks),
      (s) => s.status === 'failed',
    )
    expect(failed.error).toMatchObject({ code: 'E_VALIDATION', details: { line: 3 } })
    expect(storeBytes(box())).toBe(before)
    const result = await tasks(box(), ['job', 'result', '--id', job.job_id])
    expect(result.code).toBe(2)
  })

  it('the token is bound to the file content', async () => {
    const path = file(box(), '{"title":"a"}\n')
    const dry = await tasks(box(), ['import', '--file', path, '--dry-run'])
    writeFileSync(path, '{"title":"b"}\n')
    const run = await tasks(box(), ['import', '--file', path, '--confirm', env(dry).data.confirm_token])
    expect(env(run).error.details.reason).toBe('state_drift')
  })

  it('a missing file is E_NOT_FOUND', async () => {
    const run = await tasks(box(), ['import', '--file', join(box().root, 'nope.jsonl'), '--dry-run'])
    expect(run.code).toBe(3)
  })
})

describe('human checkpoints', () => {
  it('login stops with E_HUMAN_REQUIRED, exit 9, and a runnable resume; resume after approval succeeds', async () => {
    const start = await tasks(box(), ['login'])
    expect(start.code).toBe(9)
    const error = env(start).error
    expect(error).toMatchObject({
      code: 'E_HUMAN_REQUIRED',
      retryable: false,
      details: { action: 'approve', url: expect.any(String), user_code: expect.any(String) },
    })
    // How a person approves it is published in the checkpoint, for the agent to relay as it is.
    const approval = error.details.approval
    expect(approval).toEqual({
      instructions: expect.stringContaining(approval.command),
      user_code: error.details.user_code,
      command: expect.stringMatching(new RegExp(` login approve ${error.details.user_code}$`)),
      expires_at: error.details.expires_at,
    })
    const resumeArgs = error.details.resume.split(' ').slice(1)
    const early = await tasks(box(), resumeArgs)
    expect(early.code).toBe(9)
    expect(env(early).error.details.resume).toBe(error.details.resume)
    // Not approved yet: the same approval again, from the checkpoint.
    expect(env(early).error.details.approval).toEqual(approval)
    // The person runs the published command (here the tool is on PATH, so it starts with `tasks`).
    const approveArgs = approval.command.split(' ').slice(1)
    expect((await tasks(box(), [...approveArgs, '--account', 'ann'])).code).toBe(0)
    const done = await tasks(box(), resumeArgs)
    expect(done.code).toBe(0)
    expect(env(done).data).toMatchObject({ account: 'ann', logged_in: true })
    const again = await tasks(box(), ['login'])
    expect(env(again).data).toMatchObject({ account: 'ann', logged_in: true })
    const reuse = await tasks(box(), resumeArgs)
    expect(reuse.code).toBe(6)
    expect(env(reuse).error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'checkpoint_used' } })
  })

  it('resume with a bad id fails clearly', async () => {
    const run = await tasks(box(), ['login', 'resume', '--id', 'cp_nope'])
    expect(run.code).toBe(3)
    expect(env(run).error).toMatchObject({ code: 'E_NOT_FOUND', details: { checkpoint_id: 'cp_nope' } })
  })

  it('an expired checkpoint is E_CONFLICT', async () => {
    const start = env(await tasks(box(), ['login'])).error
    const path = join(box().env.XDG_DATA_HOME!, 'tasks', 'checkpoints', `${start.details.checkpoint_id}.json`)
    const checkpoint = JSON.parse((await import('node:fs')).readFileSync(path, 'utf8'))
    writeFileSync(path, JSON.stringify({ ...checkpoint, expires_at: '2020-01-01T00:00:00.000Z' }))
    const run = await tasks(box(), start.details.resume.split(' ').slice(1))
    expect(run.code).toBe(6)
    expect(env(run).error.details.reason).toBe('checkpoint_expired')
  })
})
