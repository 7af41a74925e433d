import { userInfo } from 'node:os'
import type { Catalogue } from '../errors/catalogue.js'
import { cancelJob, reconcile, resolveJobStore } from '../jobs/runtime.js'
import { isFinished, type JobRecord, type JobStore } from '../jobs/types.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { toolEnv } from '../settings/tool-env.js'
import {
  declaresTasks,
  isExpired,
  jobOfTaskId,
  mintTaskId,
  principalKey,
  submittedJob,
  TASKS_EXTENSION,
  type TaskFields,
  taskKey,
  taskOf,
} from './_tasks-map.js'
import { toolResult } from './result.js'
import { type Launcher, runCall } from './run-call.js'
import { toolKeyRing } from './tool-ring.js'
import { DEFAULT_MAX_ITEMS } from './tools.js'

type Sdk = typeof import('@modelcontextprotocol/server')
/** Who a call acts for (call-tool's `CallPrincipal`, restated: that module imports this one). */
type CallPrincipal = { subject: string; issuer: string } | undefined
type Server = InstanceType<Sdk['McpServer']>

/** What a tasks/* handler reads of the SDK's request context. */
type Ctx = { mcpReq: { envelope?: Record<string, unknown> } }

/**
 * The tasks extension over agentcli's async jobs: a tool call of an async command, from a client that declared the
 * extension on that request, answers with a task (the job it submitted, durable before the answer) instead of the
 * submission envelope; `tasks/get`, `tasks/update` and `tasks/cancel` read and cancel that job, for the principal
 * that started it only.
 */
export type TaskSurface = {
  /** Serve `tasks/get`, `tasks/update` and `tasks/cancel` on a server whose calls act for `principal`. */
  attach(server: Server, principal: CallPrincipal): void
  /**
   * A task as `tasks/get` reads it for `principal`, without its result: undefined when the id is not that
   * principal's (forged, another's, unknown) or has expired. A failure to read the store is thrown.
   */
  read(taskId: string, principal: CallPrincipal): Promise<TaskFields | undefined>
  /** The `CreateTaskResult` of a call whose envelope submitted a job, when the request asked for tasks. */
  created(
    envelope: Record<string, unknown>,
    caps: unknown,
    principal: CallPrincipal,
  ): Promise<Record<string, unknown> | undefined>
}

/** The client capabilities of one request: its own (2026-07-28); a 2025-era request carries none, so no tasks. */
function capsOf(ctx: Ctx): unknown {
  return ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities']
}

/** A Standard Schema for `{taskId: string}` params (the SDK validates custom methods' params through one). */
const TASK_PARAMS = {
  '~standard': {
    version: 1 as const,
    vendor: 'agentcli',
    validate: (value: unknown) => {
      const v = value as { taskId?: unknown; inputResponses?: unknown } | undefined
      return typeof v?.taskId === 'string'
        ? { value: v as { taskId: string; inputResponses?: unknown } }
        : { issues: [{ message: 'taskId must be a string' }] }
    },
  },
}

/** Build the task surface of one process (keys and store resolved on first use). */
export function taskSurface(options: {
  sdk: Sdk
  config: ToolConfig
  catalogue: Catalogue
  launcher: Launcher
}): TaskSurface {
  const { sdk, config, catalogue, launcher } = options
  const uid = userInfo().uid
  let keys: Promise<Buffer[]> | undefined
  const keyRing = () => {
    keys ??= loadKeys(config)
    keys.catch(() => {
      keys = undefined
    })
    return keys
  }
  let store: JobStore | undefined
  const jobs = () => {
    store ??= resolveJobStore(config)
    return store
  }
  const who = (principal: CallPrincipal) => principalKey(principal, uid)

  const missingCapability = () =>
    new sdk.ProtocolError(-32021, 'Missing required client capability', {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    })
  const unknownTask = (why = 'Task not found') =>
    new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, `Failed to retrieve task: ${why}`)

  /** The job behind a task id, read through the liveness check; an id that is not this principal's is unknown. */
  const find = async (taskId: string, principal: CallPrincipal): Promise<JobRecord> => {
    const jobId = jobOfTaskId(await keyRing(), taskId, who(principal))
    if (!jobId) throw unknownTask()
    const record = await jobs().get(jobId)
    // The job's own record says whose it is too (as `job status` checks it): both must name this principal.
    const owner = principal ? JSON.stringify({ iss: principal.issuer, sub: principal.subject }) : undefined
    if (!record || record.owner !== owner) throw unknownTask()
    if (isExpired(record, Date.now())) throw unknownTask('Task has expired')
    // A read changes nothing: a dead worker's verdict is computed here, recorded by the next write.
    return reconcile(readOnly(jobs(), record), record, catalogue)
  }

  // A settled job's answer never changes: kept (for the latest few) so a client polling a finished task does not
  // start a process per poll. Read only after `find` has checked the caller, so the job id alone is the key.
  const settled = new Map<string, ReturnType<typeof toolResult>>()
  const resultOf = async (record: JobRecord, principal: CallPrincipal) => {
    const kept = settled.get(record.job_id)
    if (kept) return kept
    const result = await fetchResult(record, principal)
    // Only the job's own answer is kept, never a failure to read it (the store down for a moment).
    const code = (result.structuredContent.error as { code?: unknown } | undefined)?.code
    if (result.isError && (record.status !== 'failed' || code !== record.error?.code)) return result
    settled.set(record.job_id, result)
    if (settled.size > 256) settled.delete(settled.keys().next().value!)
    return result
  }
  /** A settled job's answer as the tool result the call would have given with `wait` (`job result`'s envelope). */
  const fetchResult = async (record: JobRecord, principal: CallPrincipal) => {
    const env = principal
      ? { [toolEnv(config.bin).name('MCP_SUBJECT')]: JSON.stringify({ iss: principal.issuer, sub: principal.subject }) }
      : undefined
    const run = await runCall(launcher, ['job', 'result', '--id', record.job_id], {
      stream: record.result_kind === 'items',
      maxItems: DEFAULT_MAX_ITEMS,
      ...(env ? { env } : {}),
    })
    return toolResult(run.envelope)
  }

  return {
    async read(taskId, principal) {
      try {
        return taskOf(await find(taskId, principal), taskId)
      } catch (error) {
        if (error instanceof sdk.ProtocolError) return undefined
        throw error
      }
    },
    async created(envelope, caps, principal) {
      const jobId = declaresTasks(caps) ? submittedJob(envelope) : undefined
      if (!jobId) return undefined
      // The CLI printed the submission after the store had the record: durable here, on every server of a fleet.
      // Not readable back (the store failing now): no handle can be promised, the submission envelope still holds.
      const record = await jobs()
        .get(jobId)
        .catch(() => undefined)
      if (!record) return undefined
      // Without a key (an unreadable secret) the job still runs: its submission envelope is the honest answer.
      const key = await keyRing().then(
        (k) => k[0],
        (error: Error) => void process.stderr.write(`mcp: job ${jobId} answered without a task: ${error.message}\n`),
      )
      if (!key) return undefined
      const taskId = mintTaskId(key, jobId, who(principal))
      return { resultType: 'task', ...taskOf(record, taskId) }
    },
    attach(server, principal) {
      // A task handle is the answer to the call, with no `structuredContent`: the SDK's output check (which wants
      // the envelope of a tool that declares an output schema) does not apply to it.
      const check = server as unknown as {
        validateToolOutput: (tool: unknown, result: unknown, name: string) => unknown
      }
      const validate = check.validateToolOutput.bind(server)
      check.validateToolOutput = async (tool, result, name) =>
        (result as { resultType?: unknown }).resultType === 'task' ? undefined : validate(tool, result, name)
      server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } } as never)
      const gate = (ctx: Ctx) => {
        if (!declaresTasks(capsOf(ctx))) throw missingCapability()
      }
      server.server.setRequestHandler(
        'tasks/get' as never,
        { params: TASK_PARAMS } as never,
        (async (params: { taskId: string }, ctx: Ctx) => {
          gate(ctx)
          const record = await find(params.taskId, principal)
          const task = taskOf(record, params.taskId)
          if (task.status !== 'completed') return task
          return { ...task, result: await resultOf(record, principal) }
        }) as never,
      )
      server.server.setRequestHandler(
        'tasks/update' as never,
        { params: TASK_PARAMS } as never,
        (async (params: { taskId: string }, ctx: Ctx) => {
          gate(ctx)
          await find(params.taskId, principal)
          // No job asks for input mid-way (a checkpoint ends its job): every response is for no outstanding request,
          // which the extension says to ignore.
          return {}
        }) as never,
      )
      server.server.setRequestHandler(
        'tasks/cancel' as never,
        { params: TASK_PARAMS } as never,
        (async (params: { taskId: string }, ctx: Ctx) => {
          gate(ctx)
          const record = await find(params.taskId, principal)
          // Cancelling a settled task is the same empty acknowledgement (idempotent); a running job's worker is told
          // to stop (SIGTERM here, or through its lease on a fleet) and records `cancelled` once it has.
          if (!isFinished(record.status)) await cancelJob(jobs(), record.job_id)
          return {}
        }) as never,
      )
    },
  }
}

/** The store, except that an update is applied to the given record in memory and never written. */
function readOnly(store: JobStore, record: JobRecord): JobStore {
  const view: JobStore = Object.create(store)
  view.update = async (_id, change) => change(record) ?? record
  return view
}

/**
 * The task-id keys: derived from every key of the tool's confirm key ring (the injected one a fleet shares, else
 * this machine's `confirm.secret`), the signing key first, so ids stay valid across a key rotation.
 */
async function loadKeys(config: ToolConfig): Promise<Buffer[]> {
  const ring = await toolKeyRing(config)
  return [ring.current.key, ...[...ring.keys.values()].filter((k) => k !== ring.current.key)].map(taskKey)
}
