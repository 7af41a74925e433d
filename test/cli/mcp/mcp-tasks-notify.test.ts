import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { FIXTURE_BIN, until, useSandbox } from '../../support/helpers.js'
import { httpRpc, pollTask, requestMeta, startMcpHttp, stdioRpc } from '../../support/mcp-raw.js'

// Status notifications of the tasks extension (SEP-2663): `subscriptions/listen` with `taskIds`, then
// `notifications/tasks` on that stream. Spoken raw: the official client (2.4) has no `taskIds` in its filter.

const SUB = 'io.modelcontextprotocol/subscriptionId'
const terminal = (s: string) => ['completed', 'failed', 'cancelled'].includes(s)
// biome-ignore lint/suspicious/noExplicitAny: messages are read loosely in assertions
type Message = Record<string, any>

const closers: Array<() => Promise<void>> = []
/** Close this test's servers: registered after `useSandbox()`, so it runs before the sandbox goes. */
const useClosers = () =>
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
  })

const listenRequest = (id: string, taskIds: unknown, tasks = true) => ({
  jsonrpc: '2.0',
  id,
  method: 'subscriptions/listen',
  params: { notifications: { taskIds }, _meta: requestMeta({ tasks }) },
})
/** The messages of one subscription, in order. */
const ofSub = (all: Message[], id: string) =>
  all.filter((m) => m.params?._meta?.[SUB] === id || m.result?._meta?.[SUB] === id || m.id === id)
const statuses = (msgs: Message[], taskId: string) =>
  msgs.filter((m) => m.method === 'notifications/tasks' && m.params.taskId === taskId).map((m) => m.params.status)

describe('tool mcp: task status notifications (stdio)', () => {
  const box = useSandbox()
  useClosers()
  const open = async () => {
    const s = await stdioRpc(FIXTURE_BIN, box().env as Record<string, string>)
    closers.push(s.close)
    return s
  }

  it('a listen names its tasks: acknowledged for the real one only, its status now, its change, then the end', async () => {
    const s = await open()
    const { taskId } = (await s.rpc('tools/call', { name: 'sleepy', arguments: { ms: 1500 } })).result
    const [jobId, mac] = taskId.split('.')
    // The MAC's first character carries six bits of it: another one is another MAC.
    const forged = `${jobId}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`
    await s.send(listenRequest('listen-1', [taskId, forged, 'job_unknown.x']))
    const end = await until(() => ofSub(s.unsolicited() as Message[], 'listen-1').find((m) => 'result' in m), 30_000)
    const msgs = ofSub(s.unsolicited() as Message[], 'listen-1')
    expect(msgs[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] }, _meta: { [SUB]: 'listen-1' } },
    })
    const seen = statuses(msgs, taskId)
    expect(seen[0]).toBe('working')
    expect(seen.at(-1)).toBe('completed')
    // Every notification is a Task of the extension (what tasks/get says, without its result), for this task only.
    for (const m of msgs.filter((x) => x.method === 'notifications/tasks')) {
      expect(m.params.taskId).toBe(taskId)
      expect(Object.keys(m.params).sort()).toEqual(
        expect.arrayContaining(['taskId', 'status', 'createdAt', 'lastUpdatedAt', 'ttlMs', '_meta']),
      )
      expect(m.params.result).toBeUndefined()
    }
    const done = (await s.rpc('tasks/get', { taskId })).result
    const last = msgs.filter((m) => m.method === 'notifications/tasks').at(-1)!
    expect(last.params.lastUpdatedAt).toBe(done.lastUpdatedAt)
    // All settled: the stream ends with the listen's graceful result, last.
    expect(end).toEqual({
      jsonrpc: '2.0',
      id: 'listen-1',
      result: { resultType: 'complete', _meta: { [SUB]: 'listen-1' } },
    })
    expect(msgs.at(-1)).toBe(end)
  }, 60_000)

  it('a cancelled listen gets nothing more, while another listen on the same task sees its end', async () => {
    const s = await open()
    const { taskId } = (await s.rpc('tools/call', { name: 'sleepy', arguments: { ms: 60_000 } })).result
    await s.send(listenRequest('first', [taskId]))
    await until(() => (statuses(ofSub(s.unsolicited() as Message[], 'first'), taskId).length > 0 ? true : undefined))
    await s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'first' } })
    await s.send(listenRequest('second', [taskId]))
    await until(() => (statuses(ofSub(s.unsolicited() as Message[], 'second'), taskId).length > 0 ? true : undefined))
    expect((await s.rpc('tasks/cancel', { taskId })).result.resultType).toBe('complete')
    expect((await pollTask(s.rpc, taskId, terminal)).result.status).toBe('cancelled')
    // Both streams are served by the same turn of the same poll: once the second has seen the end, the first
    // would have too.
    await until(() =>
      statuses(ofSub(s.unsolicited() as Message[], 'second'), taskId).includes('cancelled') ? true : undefined,
    )
    expect(statuses(ofSub(s.unsolicited() as Message[], 'first'), taskId)).toEqual(['working'])
    expect(ofSub(s.unsolicited() as Message[], 'first').some((m) => 'result' in m)).toBe(false)
  }, 60_000)

  it('a listen without the extension is -32021; taskIds that are not a list of ids are -32602', async () => {
    const s = await open()
    await s.send(listenRequest('no-ext', ['job_x.y'], false))
    await s.send(listenRequest('bad', 'job_x.y'))
    const without = await until(() => (s.unsolicited() as Message[]).find((m) => m.id === 'no-ext'))
    expect(without.error).toEqual({
      code: -32021,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    })
    const bad = await until(() => (s.unsolicited() as Message[]).find((m) => m.id === 'bad'))
    expect(bad.error.code).toBe(-32602)
    // A listen with no taskIds is the SDK's, as before (nothing here to honour: acknowledged empty).
    await s.send({
      jsonrpc: '2.0',
      id: 'plain',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: false }, _meta: requestMeta() },
    })
    const ack = await until(() => ofSub(s.unsolicited() as Message[], 'plain')[0])
    expect(ack.method).toBe('notifications/subscriptions/acknowledged')
    expect(ack.params.notifications).toEqual({})
  }, 60_000)
})

describe('tool mcp --http: task status notifications are for the subject that started the task', () => {
  const box = useSandbox()
  useClosers()

  it("Ann's listen streams her task to its end; Bob's listen of it honours nothing and ends at once", async () => {
    const path = join(box().root, 'tokens')
    const sha = (t: string) => createHash('sha256').update(t).digest('hex')
    writeFileSync(path, `sha256:${sha('tok-ann')} ann\nsha256:${sha('tok-bob')} bob\n`, { mode: 0o600 })
    const server = await startMcpHttp(FIXTURE_BIN, box().env as Record<string, string>, ['--auth-tokens', path])
    closers.push(server.stop)
    const post = async (token: string, body: Record<string, unknown>, headers: Record<string, string | null> = {}) =>
      fetch(server.url, {
        method: 'POST',
        headers: Object.fromEntries(
          Object.entries({
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': String(body.method),
            authorization: `Bearer ${token}`,
            ...headers,
          }).filter((entry): entry is [string, string] => entry[1] !== null),
        ),
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      })
    const frames = (text: string): Message[] =>
      text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => JSON.parse(l.slice(5)))
    const { taskId } = (await httpRpc(server.url, 'tok-ann')('tools/call', { name: 'sleepy', arguments: { ms: 1500 } }))
      .result
    expect(taskId).toMatch(/^job_/)

    const bob = await post('tok-bob', listenRequest('b', [taskId]))
    expect(bob.headers.get('content-type')).toBe('text/event-stream')
    const bobs = frames(await bob.text())
    expect(bobs.map((m) => m.method ?? 'result')).toEqual(['notifications/subscriptions/acknowledged', 'result'])
    expect(bobs[0]!.params.notifications).toEqual({ taskIds: [] })

    const ann = await post('tok-ann', listenRequest('a', [taskId]))
    const anns = frames(await ann.text())
    expect(anns[0]!.params.notifications).toEqual({ taskIds: [taskId] })
    const seen = statuses(anns, taskId)
    expect(seen[0]).toBe('working')
    expect(seen.at(-1)).toBe('completed')
    expect(anns.at(-1)).toEqual({ jsonrpc: '2.0', id: 'a', result: { resultType: 'complete', _meta: { [SUB]: 'a' } } })

    // The standard headers are checked on a listen as on every request the SDK routes (SEP-2243): a method header
    // naming another method, or none, or no protocol version, is HTTP 400 with -32020, before any stream opens.
    for (const headers of [{ 'mcp-method': 'tools/list' }, { 'mcp-method': null }, { 'mcp-protocol-version': null }]) {
      const refused = await post('tok-ann', listenRequest('h', [taskId]), headers)
      expect(refused.status, JSON.stringify(headers)).toBe(400)
      const answer = (await refused.json()) as { id: unknown; error: { code: number; message: string } }
      expect(answer.error.code, JSON.stringify(headers)).toBe(-32020)
      expect(answer.id).toBe('h')
    }
  }, 60_000)
})
