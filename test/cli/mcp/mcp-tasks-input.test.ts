import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Sandbox, sandbox } from 'agentcli/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { apiEnv, deviceServer } from '../../support/device-server.js'
import { TASKS_BIN, until, useSandbox } from '../../support/helpers.js'
import { type Answer, httpRpc, pollTask, type Rpc, requestMeta, startMcpHttp, stdioRpc } from '../../support/mcp-raw.js'

// A person's checkpoint as a task of the tasks extension (SEP-2663): the example's device login, called by a client
// that declares tasks, is a task `input_required` whose request is the checkpoint's URL elicitation; `tasks/update`
// answers it and the checkpoint's resume runs as a job of the same task. Spoken raw over the official client's
// transport: the official client (2.4) refuses a `resultType: "task"` answer.

const terminal = (s: string) => ['completed', 'failed', 'cancelled'].includes(s)
const ELICIT = { elicitation: { form: {}, url: {} } }
// biome-ignore lint/suspicious/noExplicitAny: messages are read loosely in assertions
type Message = Record<string, any>

/** Every job record of the example in a sandbox, as the file store keeps them. */
function jobsOf(box: Sandbox): Message[] {
  const dir = join(box.env.XDG_DATA_HOME!, 'tasks', 'jobs')
  return readdirSync(dir).map((id) => JSON.parse(readFileSync(join(dir, id, 'job.json'), 'utf8')))
}

/** A login started as a task: its handle, and the one request its first `tasks/get` shows. */
async function loginTask(rpc: Rpc): Promise<{ taskId: string; key: string; got: Answer }> {
  const created = (await rpc('tools/call', { name: 'login', arguments: {} }, { capabilities: ELICIT })).result
  expect(created).toMatchObject({ resultType: 'task', status: 'input_required' })
  expect(created.inputRequests).toBeUndefined()
  const got = await rpc('tasks/get', { taskId: created.taskId }, { capabilities: ELICIT })
  const keys = Object.keys(got.result.inputRequests)
  expect(keys).toHaveLength(1)
  return { taskId: created.taskId, key: keys[0]!, got }
}

/** An empty acknowledgement (the SDK stamps its server info in `_meta`). */
function expectAck(answer: Answer): void {
  expect(answer.error).toBeUndefined()
  expect(answer.result.resultType).toBe('complete')
  expect(Object.keys(answer.result).filter((k) => k !== '_meta')).toEqual(['resultType'])
}

/** Poll until the task leaves `working` (the resume job ran): where it stands then. */
const settledOrAsking = (rpc: Rpc, taskId: string) =>
  pollTask(rpc, taskId, (s) => s !== 'working').then((a) => a.result)

describe('tool mcp: a checkpoint as a task waiting for its person (stdio)', () => {
  let api: Awaited<ReturnType<typeof deviceServer>>
  let box: Sandbox
  let server: Awaited<ReturnType<typeof stdioRpc>>
  // One device server, sandbox and server for the file: each test answers its own login's task, the accepting one
  // last (a login once logged in reports the account instead of stopping).
  beforeAll(async () => {
    api = await deviceServer()
    box = sandbox()
    server = await stdioRpc(TASKS_BIN, { ...(box.env as Record<string, string>), ...apiEnv(api) })
  })
  afterAll(async () => {
    await server?.close()
    box?.cleanup()
    await api?.close()
  })

  it('declined: the task completes with the checkpoint’s own answer; a later accept is ignored', async () => {
    const { rpc } = server
    const { taskId, key } = await loginTask(rpc)
    const ack = await rpc('tasks/update', { taskId, inputResponses: { [key]: { action: 'decline' } } })
    expectAck(ack)
    const done = (await rpc('tasks/get', { taskId })).result
    expect(done).toMatchObject({ status: 'completed', statusMessage: 'the person declined' })
    expect(done.result.isError).toBe(true)
    expect(done.result.structuredContent.error.code).toBe('E_HUMAN_REQUIRED')
    expect(done.result.structuredContent.error.details.resume).toMatch(/^tasks login resume --id cp_/)
    // Answered once: the same key again (now stale) starts nothing.
    await rpc('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept' } } })
    expect((await rpc('tasks/get', { taskId })).result.status).toBe('completed')
    expect(jobsOf(box).filter((j) => j.continues)).toEqual([])
  }, 60_000)

  it('malformed responses are -32602 naming what is wrong; unknown keys are ignored; a cancelled task takes no answer', async () => {
    const { rpc } = server
    const { taskId, key } = await loginTask(rpc)
    const bad: Array<[unknown, string]> = [
      [undefined, 'inputResponses is required'],
      [{ [key]: 5 }, `inputResponses.${key} must be the result of that request`],
      [
        { [key]: { method: 'elicitation/create', result: { action: 'accept' } } },
        `inputResponses.${key} must be the result of that request`,
      ],
      [{ [key]: { action: 'yes' } }, `inputResponses.${key}.action must be accept, decline or cancel`],
      [{ [key]: { action: 'accept', content: 'done' } }, `inputResponses.${key}.content must be an object`],
    ]
    for (const [inputResponses, message] of bad) {
      const got = await rpc('tasks/update', { taskId, inputResponses })
      expect(got.error?.code, message).toBe(-32602)
      expect(got.error?.message).toContain(message)
    }
    const unknown = await rpc('tasks/update', { taskId, inputResponses: { other: { action: 'accept' } } })
    expectAck(unknown)
    const still = (await rpc('tasks/get', { taskId }, { capabilities: ELICIT })).result
    expect(still.status).toBe('input_required')
    expect(Object.keys(still.inputRequests)).toEqual([key])
    expectAck(await rpc('tasks/cancel', { taskId }))
    await rpc('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept' } } })
    const cancelled = (await rpc('tasks/get', { taskId })).result
    expect(cancelled).toMatchObject({ status: 'cancelled', statusMessage: 'cancelled on request' })
    expect(cancelled.result).toBeUndefined()
    expect(jobsOf(box).filter((j) => j.continues)).toEqual([])
  }, 60_000)

  it('accepted: the resume runs as a job of the same task, asks again while the person has not approved, then completes', async () => {
    const { rpc, send, unsolicited } = server
    const { taskId, key, got } = await loginTask(rpc)
    expect(got.result).toMatchObject({ resultType: 'complete', taskId, status: 'input_required' })
    expect(got.result.statusMessage).toContain('CODE')
    // The checkpoint's URL elicitation, as the input-required round of a client without tasks gets it.
    const request = got.result.inputRequests[key]
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: 'https://tasks.example/device' },
    })
    expect(request.params.message).toBe(got.result.statusMessage)
    expect(key).toMatch(/^[A-Za-z0-9_-]{22}$/)
    // Status notifications follow the task through its rounds.
    await send({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: [taskId] }, _meta: requestMeta() },
    })

    // Accepted before the person approved: the resume finds the login pending, a new checkpoint, a new request id.
    const ack = await rpc('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept' } } })
    expectAck(ack)
    const again = await settledOrAsking(rpc, taskId)
    expect(again.status).toBe('input_required')
    const second = Object.keys(again.inputRequests)
    expect(second).toHaveLength(1)
    expect(second[0]).not.toBe(key)
    // The first id is answered: using it again changes nothing and runs nothing.
    await rpc('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept' } } })
    expect((await rpc('tasks/get', { taskId })).result.inputRequests).toEqual(again.inputRequests)
    expect(api.polls()).toBe(1)

    api.approve()
    await rpc('tasks/update', { taskId, inputResponses: { [second[0]!]: { action: 'accept' } } })
    const done = (await pollTask(rpc, taskId, terminal)).result
    expect(done).toMatchObject({ taskId, status: 'completed' })
    expect(done.result.isError).toBe(false)
    expect(done.result.structuredContent.data).toEqual({ account: 'ann', logged_in: true, source: 'file' })
    expect(api.polls()).toBe(2)
    // The login, then two resumes of it, each a call job continuing the one before, for nobody but the local user.
    const records = jobsOf(box)
    const chain = [records.find((j) => j.job_id === taskId.split('.')[0])!]
    while (chain.at(-1)!.answer) chain.push(records.find((j) => j.job_id === chain.at(-1)!.answer.continuation)!)
    expect(chain.map((j) => [j.command, j.status])).toEqual([
      ['login', 'failed'],
      ['login:resume', 'failed'],
      ['login:resume', 'succeeded'],
    ])
    for (const [i, j] of chain.entries()) {
      expect(j.owner).toBeUndefined()
      expect(j.call).toBe(true)
      if (i > 0) expect(j.continues).toBe(chain[i - 1]!.job_id)
    }

    const msgs = await until(() => {
      const all = (unsolicited() as Message[]).filter((m) => m.id === 'listen-1' || m.params?.taskId === taskId)
      return all.some((m) => 'result' in m) ? all : undefined
    }, 30_000)
    const seen = msgs.filter((m) => m.method === 'notifications/tasks').map((m) => m.params.status)
    expect(seen[0]).toBe('input_required')
    expect(seen.at(-1)).toBe('completed')
  }, 90_000)
})

describe('tool mcp --http: a waiting task belongs to its subject; answers at once resume once', () => {
  const box = useSandbox()
  const stops: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop()
  })

  it("another subject's get, update and cancel are unknown; two accepts at once run the resume once", async () => {
    const api = await deviceServer()
    stops.push(() => api.close())
    const path = join(box().root, 'tokens')
    const sha = (t: string) => createHash('sha256').update(t).digest('hex')
    writeFileSync(path, `sha256:${sha('tok-ann')} ann\nsha256:${sha('tok-bob')} bob\n`, { mode: 0o600 })
    const server = await startMcpHttp(TASKS_BIN, { ...(box().env as Record<string, string>), ...apiEnv(api) }, [
      '--auth-tokens',
      path,
    ])
    stops.unshift(server.stop)
    const ann = httpRpc(server.url, 'tok-ann')
    const bob = httpRpc(server.url, 'tok-bob')
    const { taskId, key } = await loginTask(ann)
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const stolen = await bob(method, { taskId, inputResponses: { [key]: { action: 'accept' } } })
      expect(stolen.error?.code, method).toBe(-32602)
      expect(stolen.error?.message).toBe('Failed to retrieve task: Task not found')
    }
    expect((await ann('tasks/get', { taskId })).result.status).toBe('input_required')

    api.approve()
    const answer = { taskId, inputResponses: { [key]: { action: 'accept' } } }
    const acks = await Promise.all([ann('tasks/update', answer), ann('tasks/update', answer)])
    for (const ack of acks) expectAck(ack)
    const done = (await pollTask(ann, taskId, terminal)).result
    expect(done).toMatchObject({ taskId, status: 'completed' })
    expect(done.result.structuredContent.data).toMatchObject({ account: 'ann', logged_in: true })
    // One resume ran (one poll of the token endpoint); a second answer's job, if it got as far, never started.
    expect(api.polls()).toBe(1)
    const resumes = jobsOf(box()).filter((j) => j.continues === taskId.split('.')[0])
    expect(resumes.filter((j) => j.status !== 'cancelled')).toHaveLength(1)
    for (const j of resumes) expect(JSON.parse(j.owner).sub).toBe('ann')
    for (const j of resumes.filter((r) => r.status === 'cancelled')) expect(j.started_at).toBeNull()
  }, 90_000)
})
