import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  ENGINES,
  envelope,
  fixtureOn,
  machines,
  newKey,
  onMachine,
  seedTask,
  useFleet,
  useInProcessMachines,
  useJobWorkers,
} from '../../support/fleet.js'
import { FIXTURE_BIN, TASKS_BIN } from '../../support/helpers.js'

const fleet = useFleet()
const shared = mkdtempSync(join(tmpdir(), 'agentcli-fleet-files-'))
afterAll(() => rmSync(shared, { recursive: true, force: true }))

const startWorker = useJobWorkers()

/*
 * The workers, and the calls that submit, confirm and cancel, are processes of their own. What only reads the
 * fleet's state (status polls, results, the job list) or mints a token (a dry run) runs in this process, on the same
 * PostgreSQL and Redis: it needs no process, and a poll loop of spawns was most of this file's time.
 */
const { tasks: tasksRead, fixture: fixtureRead } = useInProcessMachines()

// biome-ignore lint/suspicious/noExplicitAny: job status envelopes are read loosely
async function until(what: string, probe: () => Promise<any>, ok: (v: any) => boolean, ms = 30_000): Promise<any> {
  const deadline = Date.now() + ms
  let last: unknown
  for (;;) {
    last = await probe()
    if (ok(last)) return last
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe.each(ENGINES)('jobs of a fleet on %s', (engine) => {
  it('a write job confirmed on A runs on a worker on B and is seen from C; SIGTERM drains and stops B', async () => {
    const [a, b, c] = machines(3, fleet.url(engine), newKey())
    for (const m of [a!, b!, c!]) seedTask(m)
    const file = join(shared, `import-${engine}.jsonl`)
    writeFileSync(file, '{"title":"from the fleet"}\n{"title":"second","status":"done"}\n')
    const worker = await startWorker(b!, TASKS_BIN)
    const token = envelope(await tasksRead(a!, ['import', '--file', file, '--dry-run'])).data.confirm_token
    const submitted = envelope(await onMachine(a!, ['import', '--file', file, '--confirm', token]))
    expect(submitted.data.status).toBe('pending')
    const id = submitted.data.job_id as string
    const done = await until(
      'the job to succeed',
      async () => envelope(await tasksRead(c!, ['job', 'status', '--id', id])).data,
      (d) => d.status === 'succeeded' || d.status === 'failed',
    )
    expect(done.status, JSON.stringify(done)).toBe('succeeded')
    const result = envelope(await tasksRead(c!, ['job', 'result', '--id', id]))
    expect(result.data.imported).toBe(2)
    const onB = readFileSync(join(b!.box.env.XDG_DATA_HOME!, 'tasks', 'tasks.json'), 'utf8')
    expect(onB).toContain('from the fleet')
    expect(readFileSync(join(a!.box.env.XDG_DATA_HOME!, 'tasks', 'tasks.json'), 'utf8')).not.toContain('from the fleet')
    // The namespace is this test's own: the fleet's job list is exactly the one job.
    expect(envelope(await tasksRead(c!, ['job', 'list'])).data.items.map((j: { job_id: string }) => j.job_id)).toEqual([
      id,
    ])
    process.kill(worker.child.pid!, 'SIGTERM')
    expect(await worker.exited).toBe(0)
    const last = JSON.parse(worker.stdout())
    expect(last.data).toMatchObject({ status: 'stopped', jobs_run: 1 })
  }, 90_000)

  it('a worker killed mid-job (SIGKILL): the job is failed and retryable, never left running, never run twice', async () => {
    const [a, b, c, d] = machines(4, fleet.url(engine, '&lease_seconds=2'), newKey(), 'fixture')
    const worker = await startWorker(b!, FIXTURE_BIN)
    const id = envelope(await fixtureOn(a!, ['sleepy', '--ms', '30000'])).data.job_id as string
    const running = await until(
      'the job to run',
      async () => envelope(await fixtureRead(c!, ['job', 'status', '--id', id])).data,
      (s) => s.status === 'running',
    )
    expect(running.progress).toBeLessThan(1)
    process.kill(worker.child.pid!, 'SIGKILL')
    await worker.exited
    const failed = await until(
      'the dead worker to be noticed',
      async () => envelope(await fixtureRead(c!, ['job', 'status', '--id', id])).data,
      (s) => s.status !== 'running',
      15_000,
    )
    expect(failed.status).toBe('failed')
    expect(failed.error).toMatchObject({ code: 'E_INTERRUPTED', retryable: true })
    // The queue may hand the job out again (its redelivery policy): do exactly that, to another worker. The
    // job's record keeps it from running twice.
    const second = await startWorker(d!, FIXTURE_BIN)
    await redeliver(engine, id)
    await until(
      'the second worker to take the redelivered entry',
      async () => second.stderr(),
      (err: string) => err.includes(`job ${id}: failed`),
      15_000,
    )
    const after = envelope(await fixtureRead(c!, ['job', 'status', '--id', id])).data
    expect(after).toMatchObject({ status: 'failed', started_at: running.started_at, progress: failed.progress })
    const result = await fixtureRead(c!, ['job', 'result', '--id', id])
    expect(result.code).toBe(130)
    expect(envelope(result).error.retryable).toBe(true)
    process.kill(second.child.pid!, 'SIGTERM')
    expect(await second.exited).toBe(0)
  }, 90_000)

  it('cancel from C stops a job running on B; SIGTERM on B fails its job in hand as retryable', async () => {
    const [a, b, c] = machines(3, fleet.url(engine, '&lease_seconds=8'), newKey(), 'fixture')
    const worker = await startWorker(b!, FIXTURE_BIN)
    const one = envelope(await fixtureOn(a!, ['sleepy', '--ms', '30000'])).data.job_id as string
    await until(
      'the job to run',
      async () => envelope(await fixtureRead(c!, ['job', 'status', '--id', one])).data,
      (s) => s.status === 'running',
    )
    const cancelled = envelope(await fixtureOn(c!, ['job', 'cancel', '--id', one]))
    expect(cancelled.data.status).toBe('cancelled')
    const two = envelope(await fixtureOn(a!, ['sleepy', '--ms', '30000'])).data.job_id as string
    await until(
      'the second job to run',
      async () => envelope(await fixtureRead(c!, ['job', 'status', '--id', two])).data,
      (s) => s.status === 'running',
    )
    process.kill(worker.child.pid!, 'SIGTERM')
    expect(await worker.exited).toBe(0)
    const stopped = envelope(await fixtureRead(c!, ['job', 'status', '--id', two])).data
    expect(stopped.status).toBe('failed')
    expect(stopped.error).toMatchObject({ code: 'E_INTERRUPTED', retryable: true })
  }, 90_000)
})

/** Put a second queue entry for a job, as the engine's own retry or stalled-job recovery would. */
async function redeliver(engine: (typeof ENGINES)[number], id: string): Promise<void> {
  if (engine === 'postgres') {
    const { PgBoss } = await import('pg-boss')
    const boss = new PgBoss({ connectionString: fleet.url(engine).split('?')[0]!, schema: `${fleet.name}_queue` })
    boss.on('error', () => undefined)
    await boss.start()
    await boss.send('agentcli-jobs', { job_id: id })
    await boss.stop({ graceful: false, close: true })
    return
  }
  const { Queue } = await import('bullmq')
  const { Redis } = await import('ioredis')
  const connection = new Redis({ host: '127.0.0.1', port: 6379 })
  const queue = new Queue('agentcli-jobs', { connection, prefix: `${fleet.name}:bull` })
  await queue.add('run', { job_id: id }, { jobId: `${id}-again` })
  await queue.close()
  connection.disconnect()
}
