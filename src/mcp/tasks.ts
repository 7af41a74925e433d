import { userInfo } from 'node:os'
import type { Catalogue } from '../errors/catalogue.js'
import { newJobId } from '../jobs/file-store.js'
import { pendingRecord } from '../jobs/record.js'
import { cancelJob, reconcile, resolveJobStore, startJob, storedArgv } from '../jobs/runtime.js'
import { isFinished, type JobRecord, type JobStore } from '../jobs/types.js'
import { idDepth, leadingWords, longestMatch } from '../route/match.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { toolEnv } from '../settings/tool-env.js'
import { type Caps, checkpointOf, checkpointRequest, elicitModes, resumeArgv } from './_flows.js'
import {
  answeredKey,
  awaitsInput,
  declaresTasks,
  elicitAnswer,
  inputKey,
  inputResponsesProblem,
  isExpired,
  jobOfTaskId,
  mintTaskId,
  principalKey,
  stoppedAtCheckpoint,
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

/**
 * What a tasks/* handler reads of the SDK's request context: the request's envelope, and (`tasks/update`) the
 * responses, which the SDK lifts out of the params as it does a retry's, setting aside entries that are not a bare
 * result (`droppedInputResponseKeys`).
 */
type Ctx = {
  mcpReq: {
    envelope?: Record<string, unknown>
    inputResponses?: Record<string, unknown>
    droppedInputResponseKeys?: string[]
  }
}

/** The most rounds of a task read (each a person's answer and the job that resumed from it): a bound on one read. */
const MAX_ROUNDS = 100

/**
 * The tasks extension over agentcli's async jobs: a tool call of an async command, from a client that declared the
 * extension on that request, answers with a task (the job it submitted, durable before the answer) instead of the
 * submission envelope, and a call that stops at a person's checkpoint with a task waiting for that person;
 * `tasks/get`, `tasks/update` and `tasks/cancel` read, answer and cancel it, for the principal that started it only.
 * A job that stops at a checkpoint is `input_required`; the person's yes (`tasks/update`) runs the checkpoint's
 * resume as a call job of the same task.
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
  /**
   * The `CreateTaskResult` of a call (`argv`) that stopped at a person's checkpoint, when the request asked for
   * tasks: the call is recorded (a failed call job, durable before the answer) and its task waits for the person
   * (`input_required`). Undefined for anything else, or when it cannot be recorded (the input-required round then).
   */
  paused(
    argv: readonly string[],
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
      const v = value as { taskId?: unknown } | undefined
      return typeof v?.taskId === 'string'
        ? { value: v as { taskId: string } }
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
  /** The tool's commands (`login:resume`) and their schema versions: what a call job records it runs. */
  commands: ReadonlyMap<string, string>
}): TaskSurface {
  const { sdk, config, catalogue, launcher, commands } = options
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

  const ownerOf = (principal: CallPrincipal) =>
    principal ? JSON.stringify({ iss: principal.issuer, sub: principal.subject }) : undefined
  const invalidParams = (problem: string) =>
    new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, `Invalid params for tasks/update: ${problem}`)

  /**
   * The jobs behind a task id, the one it names first, then each that resumed a checkpoint of the one before (the
   * last is where the task stands), read through the liveness check; an id that is not this principal's is unknown.
   */
  const find = async (taskId: string, principal: CallPrincipal): Promise<JobRecord[]> => {
    const jobId = jobOfTaskId(await keyRing(), taskId, who(principal))
    if (!jobId) throw unknownTask()
    const record = await jobs().get(jobId)
    // The job's own record says whose it is too (as `job status` checks it): both must name this principal.
    const owner = ownerOf(principal)
    if (!record || record.owner !== owner) throw unknownTask()
    if (isExpired(record, Date.now())) throw unknownTask('Task has expired')
    // Followed only to a job made to resume exactly that checkpoint, for the same owner.
    const chain = [record]
    for (let r = record; r.answer?.action === 'accept' && chain.length < MAX_ROUNDS; ) {
      const next = await jobs().get(r.answer.continuation)
      if (!next || next.continues !== r.job_id || next.owner !== owner) break
      chain.push(next)
      r = next
    }
    // A read changes nothing: a dead worker's verdict is computed here, recorded by the next write.
    const last = chain.at(-1)!
    chain[chain.length - 1] = await reconcile(readOnly(jobs(), last), last, catalogue)
    return chain
  }

  /** The command a call job runs (for `job status`): the longest run of leading words naming one, as the router finds it. */
  const depth = idDepth(commands.keys())
  const commandOf = (argv: readonly string[]) => {
    const match = longestMatch(leadingWords(argv), (id) => commands.get(id), depth)
    return match ? { command: match.id, schema_version: match.found } : { command: argv[0]!, schema_version: '1.0' }
  }

  /** What a job's checkpoint asks of the person, under its request id: in the modes this request declares. */
  const inputRequestsOf = async (record: JobRecord, caps: unknown) => {
    const checkpoint = checkpointOf({ error: record.error })!
    // A request that declares no mode it can show (a poll needs none): what the checkpoint offers.
    const request =
      checkpointRequest(sdk.inputRequired, checkpoint, elicitModes(caps as Caps)) ??
      checkpointRequest(sdk.inputRequired, checkpoint, { form: true, url: true })!
    return { [inputKey((await keyRing())[0]!, record.job_id)]: request }
  }

  /**
   * The person accepted `record`'s checkpoint: its resume runs as a call job of the same task. The job is recorded
   * first, then claimed as the answer in the checkpoint's record (one atomic change of the store: only the first
   * answer claims it), and only then started: a resume never runs twice for one checkpoint, and the answer never
   * names a job the store lacks.
   */
  const resume = async (chain: readonly JobRecord[], record: JobRecord) => {
    const checkpoint = checkpointOf({ error: record.error })!
    const argv = resumeArgv(launcher.prefixes, checkpoint.resume)
    if (!argv) {
      // Not a command line of this tool: the task ends with the checkpoint's answer, whose resume the agent reads.
      process.stderr.write(`mcp: job ${record.job_id}: its resume is not a command of ${config.bin}; not run\n`)
      await jobs().update(record.job_id, (r) => (awaitsInput(r) ? { ...r, answer: { action: 'cancel' } } : undefined))
      return
    }
    const owner = chain[0]!.owner
    const { command, schema_version } = commandOf(argv)
    const next: JobRecord = {
      ...pendingRecord({ job_id: newJobId(), command, argv, schema_version, ...(owner ? { owner } : {}) }),
      call: true,
      continues: record.job_id,
    }
    await jobs().create(next)
    const claimed = await jobs().update(record.job_id, (r) =>
      awaitsInput(r) ? { ...r, answer: { action: 'accept', continuation: next.job_id } } : undefined,
    )
    if (claimed.answer?.action !== 'accept' || claimed.answer.continuation !== next.job_id) {
      // Another answer (or the task's cancel) came first: this job never runs.
      await jobs().update(next.job_id, (r) =>
        r.status === 'pending'
          ? {
              ...r,
              status: 'cancelled',
              message: 'another answer resumed the checkpoint first',
              finished_at: new Date().toISOString(),
            }
          : undefined,
      )
      return
    }
    // Not started (the fleet's queue failing): the job's record says so, and so does the task.
    await startJob(config, jobs(), next).catch((error: Error) =>
      process.stderr.write(`mcp: job ${next.job_id} (a resume) not started: ${error.message}\n`),
    )
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
        const chain = await find(taskId, principal)
        return taskOf(chain.at(-1)!, taskId, chain)
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
    async paused(argv, envelope, caps, principal) {
      const error = envelope.error as Partial<NonNullable<JobRecord['error']>> | undefined
      if (!declaresTasks(caps) || typeof error?.code !== 'string' || typeof error.message !== 'string') return undefined
      const now = new Date().toISOString()
      const owner = ownerOf(principal)
      const { command, schema_version } = commandOf(argv)
      // The call as it ended: nothing to run (its argv, without a confirm token, says what it was).
      const record: JobRecord = {
        ...pendingRecord(
          { job_id: newJobId(), command, argv: storedArgv(argv), schema_version, ...(owner ? { owner } : {}) },
          now,
        ),
        status: 'failed',
        started_at: now,
        finished_at: now,
        error: {
          code: error.code,
          message: error.message,
          details: typeof error.details === 'object' && error.details !== null ? error.details : {},
          retryable: error.retryable === true,
        },
        call: true,
      }
      if (!stoppedAtCheckpoint(record)) return undefined
      const key = await keyRing().then(
        (k) => k[0],
        () => undefined,
      )
      if (!key) return undefined
      // Durable before the handle, as a submitted job is: read back from the store, on every server of a fleet.
      const stored = await jobs()
        .create(record)
        .then(() => jobs().get(record.job_id))
        .catch(() => undefined)
      if (!stored) return undefined
      return { resultType: 'task', ...taskOf(stored, mintTaskId(key, record.job_id, who(principal))) }
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
          const chain = await find(params.taskId, principal)
          const record = chain.at(-1)!
          const task = taskOf(record, params.taskId, chain)
          if (task.status === 'input_required')
            return { ...task, inputRequests: await inputRequestsOf(record, capsOf(ctx)) }
          if (task.status !== 'completed') return task
          return { ...task, result: await resultOf(record, principal) }
        }) as never,
      )
      server.server.setRequestHandler(
        'tasks/update' as never,
        { params: TASK_PARAMS } as never,
        (async (params: { taskId: string }, ctx: Ctx) => {
          gate(ctx)
          const problem = inputResponsesProblem(ctx.mcpReq.inputResponses, ctx.mcpReq.droppedInputResponseKeys)
          if (problem !== undefined) throw invalidParams(problem)
          const responses = ctx.mcpReq.inputResponses as Record<string, unknown>
          const chain = await find(params.taskId, principal)
          const record = chain.at(-1)!
          // Only the request outstanding now is answered: a key of no request, or of one answered already, is
          // ignored (the extension's rule), so no answer is ever applied twice.
          if (!awaitsInput(record)) return {}
          const key = answeredKey(await keyRing(), record.job_id, responses)
          if (key === undefined) return {}
          const answer = elicitAnswer(responses[key] as Record<string, unknown>, key)
          if ('problem' in answer) throw invalidParams(answer.problem)
          if (answer.action === 'accept') await resume(chain, record)
          else
            await jobs().update(record.job_id, (r) =>
              awaitsInput(r) ? { ...r, answer: { action: answer.action as 'decline' | 'cancel' } } : undefined,
            )
          return {}
        }) as never,
      )
      server.server.setRequestHandler(
        'tasks/cancel' as never,
        { params: TASK_PARAMS } as never,
        (async (params: { taskId: string }, ctx: Ctx) => {
          gate(ctx)
          let record = (await find(params.taskId, principal)).at(-1)!
          if (awaitsInput(record)) {
            // Waiting for a person: the task ends cancelled, and no later answer resumes it. An answer that came
            // first leaves its resume to cancel instead.
            const now = await jobs().update(record.job_id, (r) =>
              awaitsInput(r) ? { ...r, cancel_requested: true } : undefined,
            )
            if (now.cancel_requested) return {}
            record = (await find(params.taskId, principal)).at(-1)!
          }
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
