import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Sandbox, sandbox } from 'agentcli/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { TASK_TTL_MS } from '../../../src/mcp/_tasks-map.js'
import { alive, env, FIXTURE_BIN, shiftedClock, TASKS_BIN, until, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture } from '../../support/in-process.js'
import { httpRpc, pollTask, type Rpc, startMcpHttp, stdioRpc } from '../../support/mcp-raw.js'
import { withoutDuration } from '../../support/mcp-session.js'

// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) over async jobs, spoken raw on the 2026-07-28
// revision: the official client (2.4) refuses a `resultType: "task"` answer, so these tests play the client. What
// the CLI says of a job (`job status`, `job result`) is read in-process: the same envelope, no fixture boot per look.

const closers: Array<() => Promise<void>> = []
/** Close this test's servers: registered after `useSandbox()`, so it runs before the sandbox goes. */
const useClosers = () =>
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
  })

/**
 * One raw stdio server of `bin` over one sandbox for the tests of a describe that need no fresh server: each waits
 * for its own jobs to end, and the server closes before the sandbox goes.
 */
const useSharedRpc = (bin: string) => {
  let shared: { box: Sandbox; rpc: Rpc; stderr(): string; close(): Promise<void> } | undefined
  let box: Sandbox | undefined
  beforeAll(async () => {
    box = sandbox()
    shared = { box, ...(await stdioRpc(bin, box.env)) }
  })
  afterAll(async () => {
    await shared?.close()
    box?.cleanup()
  })
  return () => shared!
}

const TASK_FIELDS = ['taskId', 'status', 'result', 'error', 'inputRequests']
const terminal = (s: string) => ['completed', 'failed', 'cancelled'].includes(s)

describe('tool mcp: async commands as tasks (stdio)', () => {
  // The tests that need no restart share one fixture server and one example server (each over its own sandbox).
  const fixtureServer = useSharedRpc(FIXTURE_BIN)
  const exampleServer = useSharedRpc(TASKS_BIN)
  const box = useSandbox()
  useClosers()
  const open = async (extra: Record<string, string> = {}) => {
    const s = await stdioRpc(FIXTURE_BIN, { ...(box().env as Record<string, string>), ...extra })
    closers.push(s.close)
    return s
  }

  it('advertises the extension; a job is a task, durable at once, whose result is the job result envelope', async () => {
    const { box, rpc, stderr } = fixtureServer()
    const discovered = await rpc('server/discover')
    expect(discovered.result.capabilities.extensions).toHaveProperty(['io.modelcontextprotocol/tasks'])
    expect(discovered.result.capabilities.tasks).toBeUndefined()
    const created = (await rpc('tools/call', { name: 'sleepy', arguments: { ms: 600 } })).result
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: TASK_TTL_MS })
    for (const absent of ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval'])
      expect(created, absent).not.toHaveProperty([absent])
    expect(Number.isInteger(created.pollIntervalMs)).toBe(true)
    expect(Date.parse(created.createdAt)).not.toBeNaN()
    // The handle came after the job record: the CLI sees the job under the id the task names.
    const jobId = created.taskId.split('.')[0]
    const status = env(await fixture(box, ['job', 'status', '--id', jobId]))
    expect(status.data.job_id).toBe(jobId)
    const first = await rpc('tasks/get', { taskId: created.taskId })
    expect(first.result).toMatchObject({ resultType: 'complete', taskId: created.taskId })
    const done = (await pollTask(rpc, created.taskId, terminal)).result
    expect(done.status).toBe('completed')
    expect(done.result.isError).toBe(false)
    expect(done.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined()
    const cli = env(await fixture(box, ['job', 'result', '--id', jobId]))
    expect(withoutDuration(done.result.structuredContent)).toEqual(withoutDuration(cli))
    expect(JSON.parse(done.result.content[0].text)).toEqual(done.result.structuredContent)
    // A settled answer is read once: more polls of the finished task start no process.
    for (let i = 0; i < 3; i++) expect((await rpc('tasks/get', { taskId: created.taskId })).result).toEqual(done)
    expect(stderr().split(`job result --id ${jobId}`).length - 1).toBe(1)
  }, 60_000)

  it('the tasks extension is advertised next to the skills one (the example ships skills)', async () => {
    const s = exampleServer()
    const caps = (await s.rpc('server/discover')).result.capabilities
    expect(Object.keys(caps.extensions).sort()).toEqual([
      'io.modelcontextprotocol/skills',
      'io.modelcontextprotocol/tasks',
    ])
  }, 60_000)

  it('a write job: the approval round first (input required), then the task on the round that submits it', async () => {
    const s = exampleServer()
    const file = join(s.box.root, 'in.jsonl')
    writeFileSync(file, '{"title":"one"}\n{"title":"two"}\n')
    const capabilities = { elicitation: { form: {} } }
    const asked = (await s.rpc('tools/call', { name: 'import', arguments: { file } }, { capabilities })).result
    expect(asked.resultType).toBe('input_required')
    expect(asked.taskId).toBeUndefined()
    const created = (
      await s.rpc(
        'tools/call',
        {
          name: 'import',
          arguments: { file },
          inputResponses: { approve: { action: 'accept', content: { approve: true } } },
          requestState: asked.requestState,
        },
        { capabilities },
      )
    ).result
    expect(created.resultType).toBe('task')
    expect(created.requestState).toBeUndefined()
    const done = (await pollTask(s.rpc, created.taskId, terminal)).result
    expect(done.status).toBe('completed')
    expect(done.result.structuredContent.data.imported).toBe(2)
  }, 60_000)

  it("a job that fails is a completed task whose result is the tool's error (isError), never a failed task", async () => {
    const { rpc } = fixtureServer()
    const { taskId } = (await rpc('tools/call', { name: 'sleepy', arguments: { ms: 100, fail: true } })).result
    const done = (await pollTask(rpc, taskId, terminal)).result
    expect(done.status).toBe('completed')
    expect(done.error).toBeUndefined()
    expect(done.result.isError).toBe(true)
    expect(done.result.structuredContent.error.code).toBe('E_SERVER')
  }, 60_000)

  it('tasks/cancel interrupts the running job: its worker exits and the task ends cancelled; again is the same ack', async () => {
    const { box, rpc } = fixtureServer()
    const { taskId } = (await rpc('tools/call', { name: 'sleepy', arguments: { ms: 60_000 } })).result
    const jobId = taskId.split('.')[0]
    let pid = 0
    const deadline = Date.now() + 20_000
    while (!pid) {
      const s = env(await fixture(box, ['job', 'status', '--id', jobId])).data
      if (s.status === 'running') pid = workerPid(box.env, jobId)
      if (Date.now() > deadline) throw new Error(`job never ran: ${JSON.stringify(s)}`)
      if (!pid) await new Promise((r) => setTimeout(r, 100))
    }
    expect(alive(pid)).toBe(true)
    const ack = (await rpc('tasks/cancel', { taskId })).result
    expect(ack.resultType).toBe('complete')
    for (const field of TASK_FIELDS) expect(ack).not.toHaveProperty([field])
    const done = (await pollTask(rpc, taskId, terminal)).result
    expect(done.status).toBe('cancelled')
    expect(done.result).toBeUndefined()
    // The worker records `cancelled` as it winds down; then its process is gone.
    const gone = Date.now() + 15_000
    while (alive(pid) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50))
    expect(alive(pid)).toBe(false)
    expect(env(await fixture(box, ['job', 'status', '--id', jobId])).data.status).toBe('cancelled')
    const again = (await rpc('tasks/cancel', { taskId })).result
    expect(again.resultType).toBe('complete')
    for (const field of TASK_FIELDS) expect(again).not.toHaveProperty([field])
  }, 60_000)

  it('without the extension on the request: no task (the submission as before), and tasks/* are -32021', async () => {
    const { box, rpc } = fixtureServer()
    const plain = (await rpc('tools/call', { name: 'sleepy', arguments: { ms: 50 } }, { tasks: false })).result
    expect(plain.resultType).toBe('complete')
    expect(plain.taskId).toBeUndefined()
    expect(plain.structuredContent.data).toMatchObject({ status: 'pending' })
    const { taskId } = (await rpc('tools/call', { name: 'sleepy', arguments: { ms: 50 } })).result
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const refused = await rpc(method, { taskId, inputResponses: {} }, { tasks: false })
      expect(refused.error?.code, method).toBe(-32021)
      expect(refused.error?.data.requiredCapabilities.extensions).toHaveProperty(['io.modelcontextprotocol/tasks'])
    }
    // A command that is not async answers as ever, extension or not.
    const sync = (await rpc('tools/call', { name: 'count', arguments: { n: 2 } })).result
    expect(sync.resultType).toBe('complete')
    expect(sync.structuredContent.data.items).toHaveLength(2)
    // The 2025-era methods the extension removed.
    for (const method of ['tasks/list', 'tasks/result'])
      expect((await rpc(method, { taskId })).error?.code, method).toBe(-32601)
    // Both jobs end before the sandbox goes: their workers write into it.
    expect((await pollTask(rpc, taskId, terminal)).result.status).toBe('completed')
    const plainJob = plain.structuredContent.data.job_id
    await until(
      async () => env(await fixture(box, ['job', 'status', '--id', plainJob])).data.status === 'succeeded' || undefined,
    )
  }, 60_000)

  it('an unknown, forged or altered task id is -32602 on every method; a real one survives a restart', async () => {
    const first = await open()
    const { taskId } = (await first.rpc('tools/call', { name: 'sleepy', arguments: { ms: 50 } })).result
    const [jobId, mac] = taskId.split('.')
    const other = (await first.rpc('tools/call', { name: 'sleepy', arguments: { ms: 50 } })).result.taskId
    const forged = [
      'tasks-conformance-nonexistent-12345',
      jobId,
      `${jobId}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`,
      // Another real job under this task's MAC: the MAC names its job.
      `${other.split('.')[0]}.${mac}`,
      `job_00000000000000000000.${mac}`,
    ]
    for (const id of forged)
      for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
        const got = await first.rpc(method, { taskId: id, inputResponses: {} })
        expect(got.error?.code, `${method} ${id}`).toBe(-32602)
      }
    await first.close()
    const second = await open()
    expect((await pollTask(second.rpc, taskId, terminal)).result.status).toBe('completed')
    expect((await pollTask(second.rpc, other, terminal)).result.status).toBe('completed')
    // tasks/update has nothing outstanding to answer (a job never waits for input): an empty ack.
    expect((await second.rpc('tasks/update', { taskId, inputResponses: { x: { action: 'accept' } } })).result).toEqual(
      expect.objectContaining({ resultType: 'complete' }),
    )
  }, 60_000)

  it('a task expires with its TTL: past it the id is -32602, as an unknown one', async () => {
    const first = await open()
    const { taskId } = (await first.rpc('tools/call', { name: 'sleepy', arguments: { ms: 50 } })).result
    await pollTask(first.rpc, taskId, terminal)
    await first.close()
    const later = await open(shiftedClock(TASK_TTL_MS + 60_000))
    const got = await later.rpc('tasks/get', { taskId })
    expect(got.error?.code).toBe(-32602)
    expect(got.error?.message).toContain('expired')
  }, 60_000)
})

describe('tool mcp --http: a task belongs to the subject that started it', () => {
  const box = useSandbox()
  useClosers()

  it("another subject's get, update and cancel answer as for an unknown task; the job keeps running", async () => {
    const path = join(box().root, 'tokens')
    const sha = (t: string) => createHash('sha256').update(t).digest('hex')
    writeFileSync(path, `sha256:${sha('tok-ann')} ann\nsha256:${sha('tok-bob')} bob\n`, { mode: 0o600 })
    const server = await startMcpHttp(FIXTURE_BIN, box().env as Record<string, string>, ['--auth-tokens', path])
    closers.push(server.stop)
    const ann: Rpc = httpRpc(server.url, 'tok-ann')
    const bob: Rpc = httpRpc(server.url, 'tok-bob')
    const { taskId } = (await ann('tools/call', { name: 'sleepy', arguments: { ms: 2000 } })).result
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const stolen = await bob(method, { taskId, inputResponses: {} })
      expect(stolen.error?.code, method).toBe(-32602)
      expect(stolen.error?.message).toBe('Failed to retrieve task: Task not found')
    }
    // The job itself is Ann's: Bob's job tools, and the CLI (no subject), do not find it; Bob's list is empty.
    const jobId = taskId.split('.')[0]
    for (const tool of ['job_status', 'job_result', 'job_cancel']) {
      const r = (await bob('tools/call', { name: tool, arguments: { id: jobId } }, { tasks: false })).result
      expect(r.structuredContent.error.code, tool).toBe('E_NOT_FOUND')
    }
    const bobs = (await bob('tools/call', { name: 'job_list', arguments: {} }, { tasks: false })).result
    expect(bobs.structuredContent.data.items).toEqual([])
    expect(env(await fixture(box(), ['job', 'status', '--id', jobId])).error.code).toBe('E_NOT_FOUND')
    const own = (await ann('tools/call', { name: 'job_status', arguments: { id: jobId } }, { tasks: false })).result
    expect(own.structuredContent.data.job_id).toBe(jobId)
    const anns = (await ann('tools/call', { name: 'job_list', arguments: {} }, { tasks: false })).result
    expect(anns.structuredContent.data.items.map((j: { job_id: string }) => j.job_id)).toEqual([jobId])
    // Bob's cancel did nothing: Ann's job runs to its end.
    expect((await pollTask(ann, taskId, terminal)).result.status).toBe('completed')
    // The routing header must name the task the body names (SEP-2243), checked before anything is read.
    const mismatch = await ann('tasks/get', { taskId }, { headers: { 'mcp-name': 'another-task' } })
    expect(mismatch.status).toBe(400)
    expect(mismatch.error?.code).toBe(-32020)
  }, 60_000)
})

/** The worker PID of a job, from its record on disk (the CLI's view leaves it out). */
function workerPid(boxEnv: Record<string, string | undefined>, jobId: string): number {
  const record = JSON.parse(
    readFileSync(join(boxEnv.XDG_DATA_HOME!, 'agentcli-fixture', 'jobs', jobId, 'job.json'), 'utf8'),
  )
  return record.worker_pid as number
}
