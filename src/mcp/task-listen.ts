import { declaresTasks, POLL_INTERVAL_MS, TASKS_EXTENSION, type TaskFields } from './_tasks-map.js'

/*
 * Status notifications of the tasks extension (SEP-2663): a `subscriptions/listen` request whose filter names
 * `taskIds` opens a stream of `notifications/tasks`, one per status change of a task the caller may read. SDK 2.4.0
 * cannot serve it: its filter schema (`SubscriptionFilterSchema`, core) has no `taskIds`, so its listen routers
 * (`StdioListenRouter`, `createListenRouter`, server/dist/listenRouter-*.mjs) drop the field and acknowledge an
 * empty filter, and the request never reaches a handler of ours (the entries serve it before the server instance).
 * So the server's own layer in front of the SDK (the stdio framing, the HTTP listener) hands such a request here.
 */

/** The `_meta` key every message of a listen stream carries: the listen request's JSON-RPC id. */
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId'

/**
 * The most task ids one listen may name, the most listens a server serves at once, and the most of those one
 * authenticated subject may hold (so no one subject can take every stream from the others; the local user, the only
 * caller of an unauthenticated server, may use them all).
 */
export const LISTEN_LIMITS = { taskIds: 64, subscriptions: 16, perSubject: 8 } as const

type Id = string | number
type Principal = { subject: string; issuer: string } | undefined

/** A `subscriptions/listen` request this module serves: its filter names `taskIds`. */
export type TaskListenRequest = {
  jsonrpc: '2.0'
  id: Id
  method: 'subscriptions/listen'
  params: { notifications: { taskIds?: unknown }; _meta?: Record<string, unknown> }
}

/** Where a stream's messages go: a line on stdio, an SSE frame over HTTP. */
export type ListenSink = { send(message: Record<string, unknown>): void; end(): void }

/** What reading one task says: its fields now, `undefined` when the caller may not (or no longer) read it. */
export type ReadTask = (taskId: string, principal: Principal) => Promise<TaskFields | undefined>

/** The answer to a listen: a JSON-RPC error, or a stream to start on a sink (returns its stop, for a cancel). */
export type ListenAnswer = { error: Record<string, unknown> } | { start(sink: ListenSink): () => void }

/** The status notifications of one server process (see the module's comment). */
export type TaskListener = {
  /** Whether `message` is a listen for tasks (a 2026-07-28 request whose filter names `taskIds`). */
  claims(message: unknown): message is TaskListenRequest
  /** Check the request and the ids (each must be the caller's, as `tasks/get` checks it), then answer. */
  open(request: TaskListenRequest, principal: Principal): Promise<ListenAnswer>
  /** The server stops: every stream ends with its graceful result. */
  closeAll(): void
}

const terminal = (status: string) => status === 'completed' || status === 'failed' || status === 'cancelled'

const rpcError = (id: Id, code: number, message: string, data?: Record<string, unknown>) => ({
  error: { jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } },
})

/**
 * The listener over `read` (the task surface's check and read). The job store is polled every `intervalMs` only
 * while some stream watches a task, for the tasks watched only; a task's notification goes out when its status,
 * message or `lastUpdatedAt` changed, and a task is dropped once it has settled. Nothing is kept on disk.
 */
export function taskListener(read: ReadTask, intervalMs = POLL_INTERVAL_MS): TaskListener {
  // Keyed by the server's own count: two HTTP clients may both name their listen `1`.
  type Sub = { id: Id; principal: Principal; sink: ListenSink; tasks: Map<string, string> }
  const subs = new Map<number, Sub>()
  let opened = 0
  let timer: NodeJS.Timeout | undefined
  let polling = false

  const subjectOf = (p: Principal) => (p ? `${p.issuer}\0${p.subject}` : undefined)
  /** The error a new listen of `principal` gets when the server, or that subject, holds all it may. */
  const refusal = (id: Id, principal: Principal) => {
    if (subs.size >= LISTEN_LIMITS.subscriptions) return rpcError(id, -32603, 'Subscription limit reached')
    const subject = subjectOf(principal)
    if (subject === undefined) return undefined
    let held = 0
    for (const sub of subs.values()) if (subjectOf(sub.principal) === subject) held++
    return held >= LISTEN_LIMITS.perSubject
      ? rpcError(id, -32603, 'Subscription limit reached', { per_subject: LISTEN_LIMITS.perSubject })
      : undefined
  }
  const stamp = (id: Id, params: Record<string, unknown>) => ({
    ...params,
    _meta: { ...(params._meta as object | undefined), [SUBSCRIPTION_ID_KEY]: id },
  })
  const notify = (sub: Sub, taskId: string, task: TaskFields) => {
    const seen = `${task.status}\0${task.statusMessage ?? ''}\0${task.lastUpdatedAt}`
    if (sub.tasks.get(taskId) !== seen) {
      sub.tasks.set(taskId, seen)
      sub.sink.send({ jsonrpc: '2.0', method: 'notifications/tasks', params: stamp(sub.id, { ...task }) })
    }
    // A settled task changes no more: it is not read again.
    if (terminal(task.status)) sub.tasks.delete(taskId)
  }
  const poll = async () => {
    if (polling) return
    polling = true
    try {
      for (const [key, sub] of subs)
        for (const taskId of [...sub.tasks.keys()]) {
          // The store failing for a moment is no change: the task is read again at the next turn.
          const task = await read(taskId, sub.principal).catch(() => null)
          if (subs.get(key) !== sub || !sub.tasks.has(taskId) || task === null) continue
          if (task === undefined) sub.tasks.delete(taskId)
          else notify(sub, taskId, task)
          settle(key, sub)
        }
    } finally {
      polling = false
      disarm()
    }
  }
  // Every task of a stream has settled (or can no longer be read): the stream ends with its graceful result.
  const settle = (key: number, sub: Sub) => {
    if (sub.tasks.size === 0 && subs.get(key) === sub) end(key, true)
  }
  const watching = () => [...subs.values()].some((sub) => sub.tasks.size > 0)
  const arm = () => {
    if (timer || !watching()) return
    timer = setInterval(() => void poll(), intervalMs)
    timer.unref()
  }
  // Nobody watching an unsettled task: the store is not read at all.
  const disarm = () => {
    if (timer && !watching()) {
      clearInterval(timer)
      timer = undefined
    }
  }
  const end = (key: number, graceful: boolean) => {
    const sub = subs.get(key)
    if (!sub) return
    subs.delete(key)
    disarm()
    const { id } = sub
    if (graceful)
      sub.sink.send({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_KEY]: id } } })
    sub.sink.end()
  }

  return {
    claims(message): message is TaskListenRequest {
      const m = message as Partial<TaskListenRequest> | null
      const id = m?.id
      return (
        typeof m === 'object' &&
        m !== null &&
        m.method === 'subscriptions/listen' &&
        (typeof id === 'string' || typeof id === 'number') &&
        typeof m.params?.notifications === 'object' &&
        m.params.notifications !== null &&
        'taskIds' in m.params.notifications &&
        typeof m.params._meta?.['io.modelcontextprotocol/protocolVersion'] === 'string'
      )
    },
    async open(request, principal) {
      const { id } = request
      const ids = request.params.notifications.taskIds
      if (!declaresTasks(request.params._meta?.['io.modelcontextprotocol/clientCapabilities']))
        return rpcError(id, -32021, 'Missing required client capability', {
          requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        })
      if (!Array.isArray(ids) || !ids.every((t) => typeof t === 'string') || ids.length > LISTEN_LIMITS.taskIds)
        return rpcError(
          id,
          -32602,
          `Invalid params: taskIds must be an array of at most ${LISTEN_LIMITS.taskIds} task ids`,
        )
      const full = refusal(id, principal)
      if (full) return full
      // Each id is read as tasks/get reads it: another principal's, a forged or an expired one is simply not
      // honoured (the acknowledgement lists what is), exactly as an unknown one.
      const first = new Map<string, TaskFields>()
      for (const taskId of new Set(ids as string[])) {
        const task = await read(taskId, principal).catch(() => undefined)
        if (task) first.set(taskId, task)
      }
      return {
        start(sink) {
          // Checked again: other listens may have started while this one read its tasks.
          const late = refusal(id, principal)
          if (late) {
            sink.send(late.error)
            sink.end()
            return () => {}
          }
          const key = ++opened
          const honored = [...first.keys()]
          sink.send({
            jsonrpc: '2.0',
            method: 'notifications/subscriptions/acknowledged',
            params: stamp(id, { notifications: { taskIds: honored } }),
          })
          const sub: Sub = { id, principal, sink, tasks: new Map(honored.map((t) => [t, ''])) }
          subs.set(key, sub)
          // Where each task stands now, then its changes.
          for (const [taskId, task] of first) notify(sub, taskId, task)
          settle(key, sub)
          arm()
          return () => end(key, false)
        },
      }
    },
    closeAll() {
      for (const key of [...subs.keys()]) end(key, true)
    },
  }
}
