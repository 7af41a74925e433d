import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { apiEnv, deviceServer } from '../../support/device-server.js'
import { ENGINES, type Machine, machines, newKey, useFleet, useJobWorkers } from '../../support/fleet.js'
import { FIXTURE_BIN, TASKS_BIN } from '../../support/helpers.js'
import { httpRpc, pollTask, startMcpHttp } from '../../support/mcp-raw.js'

// A fleet's servers share the job store and the key ring: a task started through one `tool mcp --http` is read,
// finished and cancelled through another, its jobs run by a worker on a third machine.

const fleet = useFleet()
const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  // Only the servers this file started (the workers: useJobWorkers).
  for (const stop of stops.splice(0)) await stop()
})

const worker = useJobWorkers()
/** `job worker` on a machine: on a fleet, the jobs an MCP server queues run on whichever worker takes them. */
const startWorker = async (m: Machine, bin = FIXTURE_BIN): Promise<void> => void (await worker(m, bin))

const terminal = (s: string) => ['completed', 'failed', 'cancelled'].includes(s)

describe.each(ENGINES)('tasks of a fleet on %s', (engine) => {
  it('a task started on server A is answered, completed and cancelled through server B', async () => {
    const [a, b, w] = machines(3, fleet.url(engine), newKey(), 'fixture')
    await startWorker(w!)
    const serverA = await startMcpHttp(FIXTURE_BIN, a!.env)
    stops.push(serverA.stop)
    const serverB = await startMcpHttp(FIXTURE_BIN, b!.env)
    stops.push(serverB.stop)
    const onA = httpRpc(serverA.url)
    const onB = httpRpc(serverB.url)

    const created = (await onA('tools/call', { name: 'sleepy', arguments: { ms: 300 } })).result
    expect(created.resultType).toBe('task')
    // Durable before the answer, on the shared store: the other server resolves it at once.
    expect((await onB('tasks/get', { taskId: created.taskId })).result.taskId).toBe(created.taskId)
    const done = (await pollTask(onB, created.taskId, terminal)).result
    expect(done.status).toBe('completed')
    expect(done.result.structuredContent.data).toEqual({ slept_ms: 300 })

    const long = (await onA('tools/call', { name: 'sleepy', arguments: { ms: 60_000 } })).result
    // Running on the worker (no longer `queued`), so the cancel has a worker to reach through its lease.
    const deadline = Date.now() + 30_000
    while ((await onB('tasks/get', { taskId: long.taskId })).result.statusMessage === 'queued') {
      if (Date.now() > deadline) throw new Error('the job never started')
      await new Promise((r) => setTimeout(r, 100))
    }
    expect((await onB('tasks/cancel', { taskId: long.taskId })).result.resultType).toBe('complete')
    expect((await pollTask(onA, long.taskId, terminal)).result.status).toBe('cancelled')

    // A server of another fleet (another key ring) on the same store does not honour the id.
    const [stranger] = machines(1, fleet.url(engine), newKey(), 'fixture')
    const serverC = await startMcpHttp(FIXTURE_BIN, stranger!.env)
    stops.push(serverC.stop)
    expect((await httpRpc(serverC.url)('tasks/get', { taskId: created.taskId })).error?.code).toBe(-32602)
  }, 120_000)

  it('a login waiting for its person on server A is answered through B and resumed by a worker on a third machine', async () => {
    const api = await deviceServer()
    stops.push(() => api.close())
    const [a, b, w] = machines(3, fleet.url(engine), newKey(), 'tasks').map((m) => ({
      ...m,
      env: { ...m.env, ...apiEnv(api) },
    }))
    await startWorker(w!, TASKS_BIN)
    const serverA = await startMcpHttp(TASKS_BIN, a!.env)
    stops.unshift(serverA.stop)
    const serverB = await startMcpHttp(TASKS_BIN, b!.env)
    stops.unshift(serverB.stop)
    const onA = httpRpc(serverA.url)
    const onB = httpRpc(serverB.url)
    const capabilities = { elicitation: { url: {} } }

    const created = (await onA('tools/call', { name: 'login', arguments: {} }, { capabilities })).result
    expect(created).toMatchObject({ resultType: 'task', status: 'input_required' })
    // The task and its request are the store's: the other server shows the same request under the same id.
    const asked = (await onB('tasks/get', { taskId: created.taskId }, { capabilities })).result
    const [key] = Object.keys(asked.inputRequests)
    expect((await onA('tasks/get', { taskId: created.taskId }, { capabilities })).result.inputRequests).toEqual(
      asked.inputRequests,
    )
    expect(asked.inputRequests[key!].params).toMatchObject({ mode: 'url', url: 'https://tasks.example/device' })
    api.approve()
    const ack = await onB('tasks/update', { taskId: created.taskId, inputResponses: { [key!]: { action: 'accept' } } })
    expect(ack.result.resultType).toBe('complete')
    const done = (await pollTask(onA, created.taskId, terminal)).result
    expect(done.status).toBe('completed')
    expect(done.result.structuredContent.data).toEqual({ account: 'ann', logged_in: true, source: 'file' })
    // The resume ran on the worker's machine: the credential is there, not on either server's.
    const saved = (m: Machine) => existsSync(join(m.box.env.XDG_CONFIG_HOME!, 'tasks', 'credentials.json'))
    expect([a, b, w].map((m) => saved(m!))).toEqual([false, false, true])
    expect(api.polls()).toBe(1)
  }, 120_000)
})
