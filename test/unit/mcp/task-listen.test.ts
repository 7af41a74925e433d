import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { TaskFields } from '../../../src/mcp/_tasks-map.js'
import {
  LISTEN_LIMITS,
  type ListenSink,
  SUBSCRIPTION_ID_KEY,
  type TaskListenRequest,
  taskListener,
} from '../../../src/mcp/task-listen.js'

// The listener of task status notifications on its own: a fake store (`read`) counts its reads, fake timers turn
// the poll, a sink records what a client would receive.

const EXT = 'io.modelcontextprotocol/tasks'
const meta = (tasks = true) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [EXT]: {} } } : {},
})
const listen = (id: string | number, taskIds: unknown, tasks = true): TaskListenRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'subscriptions/listen',
  params: { notifications: { taskIds }, _meta: meta(tasks) },
})
const task = (taskId: string, status: TaskFields['status'], at = 'T1'): TaskFields => ({
  taskId,
  status,
  createdAt: 'T0',
  lastUpdatedAt: at,
  ttlMs: 1000,
  pollIntervalMs: 1000,
})

/** A store of tasks for one principal (`ann`); anyone else reads nothing, as tasks/get would answer. */
function store() {
  const tasks = new Map<string, TaskFields>()
  const reads: string[] = []
  let failing = false
  const read = async (taskId: string, principal: { subject: string; issuer: string } | undefined) => {
    reads.push(taskId)
    if (failing) throw new Error('store down')
    return principal?.subject === 'ann' ? tasks.get(taskId) : undefined
  }
  return { tasks, reads, read, fail: (on: boolean) => (failing = on) }
}
const ann = { subject: 'ann', issuer: 'local' }
const bob = { subject: 'bob', issuer: 'local' }

function sink() {
  const got: Record<string, unknown>[] = []
  let ended = 0
  const s: ListenSink = { send: (m) => void got.push(m), end: () => void ended++ }
  return { s, got, ended: () => ended }
}
/** A listen opened and started on a fresh sink (it must not be refused). */
async function started(l: ReturnType<typeof taskListener>, request: TaskListenRequest, principal: typeof ann) {
  const answer = await l.open(request, principal)
  if (!('start' in answer)) throw new Error(`refused: ${JSON.stringify(answer.error)}`)
  const out = sink()
  return { ...out, stop: answer.start(out.s) }
}
/** Time passes (5 polls' worth) and the store is not read. */
async function noMoreReads(st: ReturnType<typeof store>) {
  const reads = st.reads.length
  await vi.advanceTimersByTimeAsync(5000)
  expect(st.reads).toHaveLength(reads)
}
const statuses = (got: Record<string, unknown>[]) =>
  got.filter((m) => m.method === 'notifications/tasks').map((m) => (m.params as { status: string }).status)

describe('task status notifications (the listener)', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('claims only a 2026 listen whose filter names taskIds', () => {
    const l = taskListener(store().read)
    expect(l.claims(listen(1, ['a']))).toBe(true)
    expect(l.claims(listen('x', []))).toBe(true)
    expect(
      l.claims({ ...listen(1, ['a']), params: { notifications: { toolsListChanged: true }, _meta: meta() } }),
    ).toBe(false)
    expect(l.claims({ ...listen(1, ['a']), params: { notifications: { taskIds: ['a'] } } })).toBe(false)
    expect(l.claims({ ...listen(1, ['a']), method: 'tasks/get' })).toBe(false)
    expect(l.claims({ ...listen(1, ['a']), id: null })).toBe(false)
    expect(l.claims({ ...listen(1, ['a']), params: { notifications: null, _meta: meta() } })).toBe(false)
    expect(l.claims(null)).toBe(false)
  })

  it('refuses a client without the extension (-32021), bad ids (-32602), and past the limit (-32603)', async () => {
    const l = taskListener(store().read)
    const without = await l.open(listen(1, ['a'], false), ann)
    expect(without).toEqual({
      error: {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32021,
          message: 'Missing required client capability',
          data: { requiredCapabilities: { extensions: { [EXT]: {} } } },
        },
      },
    })
    for (const bad of ['a', [1], Array.from({ length: LISTEN_LIMITS.taskIds + 1 }, (_, i) => `t${i}`)]) {
      const answer = await l.open(listen(2, bad), ann)
      expect('error' in answer && (answer.error.error as { code: number }).code).toBe(-32602)
    }
    // Every caller's task here (the store above has only ann's): listens that stay open until stopped.
    const anyones = async (taskId: string) => task(taskId, 'working')
    const full = taskListener(anyones)
    const code = (answer: Awaited<ReturnType<typeof full.open>>) =>
      'error' in answer ? (answer.error.error as { code: number; data?: unknown }) : undefined
    // One subject holds at most its share: ann's next listen is refused while bob's still opens.
    for (let i = 0; i < LISTEN_LIMITS.perSubject; i++) await started(full, listen(`a${i}`, ['t']), ann)
    expect(code(await full.open(listen('a-more', ['t']), ann))).toEqual({
      code: -32603,
      message: 'Subscription limit reached',
      data: { per_subject: LISTEN_LIMITS.perSubject },
    })
    for (let i = 0; i < LISTEN_LIMITS.subscriptions - LISTEN_LIMITS.perSubject; i++)
      await started(full, listen(`b${i}`, ['t']), bob)
    // The server's own limit, for anyone (the local user of an unauthenticated server included).
    for (const who of [{ subject: 'cy', issuer: 'local' }, undefined])
      expect(code(await full.open(listen('one-more', ['t']), who))).toEqual({
        code: -32603,
        message: 'Subscription limit reached',
      })
    full.closeAll()
    // The local user (no subject) may use every stream.
    const local = taskListener(anyones)
    for (let i = 0; i < LISTEN_LIMITS.subscriptions; i++) await started(local, listen(i, ['t']), undefined as never)
    expect(code(await local.open(listen('one-more', ['t']), undefined))?.code).toBe(-32603)
    local.closeAll()
  })

  it('checks the limits again when a listen starts: two opened at once past the share, the later one ends refused', async () => {
    const st = store()
    st.tasks.set('t', task('t', 'working'))
    const l = taskListener(st.read)
    for (let i = 0; i < LISTEN_LIMITS.perSubject - 1; i++) await started(l, listen(`a${i}`, ['t']), ann)
    // Both pass the check in open (one slot left), then start one after the other.
    const [first, second] = await Promise.all([l.open(listen('x', ['t']), ann), l.open(listen('y', ['t']), ann)])
    if (!('start' in first) || !('start' in second)) throw new Error('refused at open')
    first.start(sink().s)
    const late = sink()
    second.start(late.s)
    expect(late.got).toEqual([
      {
        jsonrpc: '2.0',
        id: 'y',
        error: { code: -32603, message: 'Subscription limit reached', data: { per_subject: LISTEN_LIMITS.perSubject } },
      },
    ])
    expect(late.ended()).toBe(1)
    l.closeAll()
  })

  it("acknowledges only the caller's own tasks, sends where each stands, then each change, and ends once all settled", async () => {
    const st = store()
    st.tasks.set('mine', task('mine', 'working'))
    const l = taskListener(st.read, 1000)
    const out = await started(l, listen('L', ['mine', 'forged', 'mine']), ann)
    expect(out.got[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: ['mine'] }, _meta: { [SUBSCRIPTION_ID_KEY]: 'L' } },
    })
    expect(out.got[1]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: { ...task('mine', 'working'), _meta: { [SUBSCRIPTION_ID_KEY]: 'L' } },
    })
    // No change: nothing sent. A new message or time: one notification each.
    await vi.advanceTimersByTimeAsync(1000)
    expect(out.got).toHaveLength(2)
    st.tasks.set('mine', { ...task('mine', 'working', 'T2'), statusMessage: '50%' })
    await vi.advanceTimersByTimeAsync(1000)
    expect(statuses(out.got)).toEqual(['working', 'working'])
    st.tasks.set('mine', task('mine', 'completed', 'T3'))
    await vi.advanceTimersByTimeAsync(1000)
    expect(statuses(out.got)).toEqual(['working', 'working', 'completed'])
    // Settled: the stream ends with its graceful result, and the store is read no more.
    expect(out.got.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 'L',
      result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_KEY]: 'L' } },
    })
    expect(out.ended()).toBe(1)
    await noMoreReads(st)
  })

  it("another principal's listen honours nothing and ends at once; the store is never polled for it", async () => {
    const st = store()
    st.tasks.set('mine', task('mine', 'working'))
    const l = taskListener(st.read, 1000)
    const out = await started(l, listen(7, ['mine']), bob)
    expect(out.got.map((m) => m.method ?? 'result')).toEqual(['notifications/subscriptions/acknowledged', 'result'])
    expect((out.got[0]!.params as { notifications: unknown }).notifications).toEqual({ taskIds: [] })
    await noMoreReads(st)
  })

  it('polls only while a stream watches: none before, one read per task per turn, none after its stop', async () => {
    const st = store()
    st.tasks.set('a', task('a', 'working'))
    st.tasks.set('b', task('b', 'working'))
    const l = taskListener(st.read, 1000)
    await vi.advanceTimersByTimeAsync(5000)
    expect(st.reads).toEqual([])
    const out = await started(l, listen(1, ['a', 'b']), ann)
    const { stop } = out
    st.reads.length = 0
    await vi.advanceTimersByTimeAsync(3000)
    expect(st.reads).toEqual(['a', 'b', 'a', 'b', 'a', 'b'])
    // The store failing for a turn is no change and no end: the next turn reads again.
    st.fail(true)
    await vi.advanceTimersByTimeAsync(1000)
    st.fail(false)
    // A task that can no longer be read (expired) is dropped without a notification.
    st.tasks.delete('b')
    await vi.advanceTimersByTimeAsync(1000)
    expect(statuses(out.got)).toEqual(['working', 'working'])
    stop()
    expect(out.ended()).toBe(1)
    await noMoreReads(st)
    // Stopped, not ended by the server: no graceful result.
    expect(out.got.some((m) => 'result' in m)).toBe(false)
    stop()
    expect(out.ended()).toBe(1)
  })

  it('the server stopping ends every stream with its graceful result', async () => {
    const st = store()
    st.tasks.set('a', task('a', 'working'))
    const l = taskListener(st.read, 1000)
    const outs = [await started(l, listen(0, ['a']), ann), await started(l, listen(1, ['a']), ann)]
    l.closeAll()
    for (const [i, out] of outs.entries()) {
      expect(out.got.at(-1)).toEqual({
        jsonrpc: '2.0',
        id: i,
        result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_KEY]: i } },
      })
      expect(out.ended()).toBe(1)
    }
    await noMoreReads(st)
  })
})
