import { spawn } from 'node:child_process'
import { hostname } from 'node:os'
import { AgentError } from '../errors/agent-error.js'
import { clearBeforeChange } from '../errors/before-change.js'
import type { Catalogue } from '../errors/catalogue.js'
import { toAgentError } from '../errors/normalize.js'
import { isFleetStore, lazyFleetJobStore } from '../fleet/job-store.js'
import { stateLocation } from '../fleet/location.js'
import { errorBody } from '../output/envelope.js'
import { redactAtRest } from '../output/redact.js'
import { invocation } from '../runtime/invocation.js'
import { runScript } from '../runtime/run-io.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { runEnv } from '../settings/run-env.js'
import { fileJobStore, newJobId } from './file-store.js'
import { isAlive, isSameProcess, processIdentity } from './liveness.js'
import { pendingRecord } from './record.js'
import { canMove, type JobPlan, type JobRecord, type JobStore } from './types.js'

/** What `work()` receives in the worker process. */
export type JobContext = {
  /** The job's id (`job status <id>`). */
  job_id: string
  /** Aborted when the job is cancelled or the worker is told to stop. */
  signal: AbortSignal
  /**
   * Report progress in [0, 1], with an optional estimate and a short note. A finished job's status says it is
   * done: its `message` is the note given with progress 1, else `done` (never a note from mid-way).
   */
  progress(fraction: number, options?: { eta_seconds?: number; message?: string }): Promise<void>
  /** Add items to a large result, served as NDJSON by `job result`. */
  emit(...items: unknown[]): Promise<void>
}

/** What submitting returns (spec 002 §15.2). */
export type SubmittedJob = {
  /** The new job's id. */
  job_id: string
  /** Always `pending` at submission. */
  status: 'pending'
  /** The command that reports its status (`tool job status <id>`). */
  poll: string
  /** The command that returns its result once it has succeeded (`tool job result <id>`). */
  result: string
}

/**
 * The store every command and the worker use; the one place to plug in another backend: with a state URL
 * (`<BIN>_STATE_URL`), the fleet's engine and its queue, else the files of this machine.
 */
export function resolveJobStore(config: ToolConfig): JobStore {
  return stateLocation(config).kind === 'file' ? fileJobStore(config.dataDir) : lazyFleetJobStore(config)
}

/** A pending job that never got a worker after this long is failed as retryable. */
const START_TIMEOUT_MS = 60_000

/** Flow flags are never stored: the job re-runs the command's work, not its confirmation. */
export function storedArgv(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--confirm') i++
    else if (!a.startsWith('--confirm=') && a !== '--dry-run') out.push(a)
  }
  return out
}

/** Record a pending job and start a detached worker that outlives this process. */
export async function submitJob(options: {
  config: ToolConfig
  store: JobStore
  command: string
  argv: readonly string[]
  schemaVersion: string
  /** For a write: what was confirmed, checked by the worker before it applies anything. */
  plan?: JobPlan
  /** The remote subject the submitting call acts for (`tool mcp --http`): the only one that may see the job. */
  owner?: string
}): Promise<SubmittedJob> {
  const { config, store } = options
  const now = new Date().toISOString()
  const id = newJobId()
  const record = pendingRecord(
    {
      job_id: id,
      command: options.command,
      argv: storedArgv(options.argv),
      schema_version: options.schemaVersion,
      ...(options.plan ? { plan: options.plan } : {}),
      ...(options.owner ? { owner: options.owner } : {}),
    },
    now,
  )
  await store.create(record)
  await startJob(config, store, record)
  return submitted(config, id)
}

/**
 * The words that start this tool again: node (with this process's flags when it runs the script itself) and the
 * script, which an in-process run names (the caller's own argv is not the tool's).
 */
export function toolStart(): string[] {
  const script = runScript()!
  return script === process.argv[1] ? [...process.execArgv, script] : [script]
}

/**
 * Hand a created job to a worker: on a fleet, its queue (any worker takes it); else a detached `job worker` of this
 * machine that outlives this process.
 */
export async function startJob(config: ToolConfig, store: JobStore, record: JobRecord): Promise<void> {
  const id = record.job_id
  if (isFleetStore(store)) {
    // Any worker of the fleet takes it from the queue. Not queued means it never runs: say so on the record.
    await store.dispatch(record).catch(async (error: unknown) => {
      // The send may have reached the queue before the failure: only a record no worker can claim any more
      // makes "nothing changed" true. If even that cannot be written, the job may still run: in doubt.
      const closed = await store
        .update(id, (r) =>
          r.status === 'pending'
            ? {
                ...r,
                status: 'failed',
                finished_at: new Date().toISOString(),
                error: { code: 'E_NETWORK', message: 'the job could not be queued', details: {}, retryable: true },
              }
            : undefined,
        )
        .then(
          (r) => r.status === 'failed',
          () => false,
        )
      if (closed) throw error
      clearBeforeChange(error)
      throw new AgentError('E_NETWORK', `job ${id} may have been queued: the state store failed while queueing it`, {
        details: {
          reason: 'state_store_after_apply',
          in_doubt: true,
          job_id: id,
          poll: `${config.bin} job status --id ${id}`,
        },
        cause: error,
      })
    })
    return
  }
  const child = spawn(process.execPath, [...toolStart(), 'job', 'worker', '--id', id, '--quiet'], {
    detached: true,
    stdio: 'ignore',
    env: runEnv(),
  })
  child.unref()
}

function submitted(config: ToolConfig, id: string): SubmittedJob {
  const words = invocation(config.bin)
  return {
    job_id: id,
    status: 'pending',
    poll: `${words} job status --id ${id}`,
    result: `${words} job result --id ${id}`,
  }
}

function failed(record: JobRecord, error: AgentError, catalogue: Catalogue): JobRecord {
  return {
    ...record,
    status: 'failed',
    finished_at: new Date().toISOString(),
    error: redactAtRest(errorBody(error, catalogue).body),
  }
}

/**
 * Detect a job whose worker died (killed, crashed, machine restarted) and fail it as retryable, so no job stays
 * `running` forever; a job whose cancel was asked for ends `cancelled` however its worker went. Called on every
 * read of a job.
 */
export async function reconcile(store: JobStore, record: JobRecord, catalogue: Catalogue): Promise<JobRecord> {
  // A fleet's worker may run on another machine: its lease, renewed while it lives, is the liveness. A queued
  // job waits for a free worker however long that takes.
  const dead = isFleetStore(store)
    ? record.status === 'running' && !(record.lease_until && Date.parse(record.lease_until) > Date.now())
    : (record.status === 'running' &&
        (record.worker_pid === null || !isAlive(record.worker_pid, record.worker_start))) ||
      (record.status === 'pending' && Date.now() - Date.parse(record.submitted_at) > START_TIMEOUT_MS)
  if (!dead) return record
  const error =
    record.status === 'pending'
      ? new AgentError('E_INTERRUPTED', 'the job never started')
      : isFleetStore(store)
        ? // A lease can also lapse because the worker lost the store while the work went on: say what is known.
          new AgentError(
            'E_INTERRUPTED',
            `the worker ${record.worker_host ?? ''} stopped renewing its claim (it died, or lost the state store)`,
            {
              details: {
                reason: 'worker_lost',
                in_doubt: record.plan !== undefined,
                fix: 'for a write job, check what it changed before submitting it again',
              },
            },
          )
        : new AgentError('E_INTERRUPTED', `the worker (pid ${record.worker_pid}) died`)
  // The job ended at its last sign of life: the same answer whether a read computes it or a write records it.
  return store.update(record.job_id, (r) => {
    if (r.status !== record.status || r.worker_pid !== record.worker_pid) return undefined
    if (r.cancel_requested) return { ...r, status: 'cancelled', finished_at: r.updated_at }
    return { ...failed(r, error, catalogue), finished_at: r.updated_at }
  })
}

/**
 * Ask a job to stop: a pending job is cancelled at once; a running one is told to stop and cancels itself.
 * Only the call that asks first signals, and only a worker whose PID and start time both match the record (a
 * record naming some other process never gets it killed); later calls just see the request. A worker that
 * cannot be signalled notices the request itself.
 */
export async function cancelJob(store: JobStore, id: string): Promise<JobRecord> {
  let first = false
  const record = await store.update(id, (r) => {
    if (r.status === 'pending')
      return { ...r, status: 'cancelled', cancel_requested: true, finished_at: new Date().toISOString() }
    if (r.status === 'running' && !r.cancel_requested) {
      first = true
      return { ...r, cancel_requested: true }
    }
    return undefined
  })
  if (record.status !== 'running') return record
  // A fleet's worker reads the request with its lease renewal and stops the job itself.
  if (isFleetStore(store)) return record
  if (record.worker_pid !== null && isAlive(record.worker_pid, record.worker_start)) {
    if (first && isSameProcess(record.worker_pid, record.worker_start)) {
      try {
        process.kill(record.worker_pid, 'SIGTERM')
      } catch {}
    }
    return record
  }
  return store.update(id, (r) =>
    r.status === 'running' ? { ...r, status: 'cancelled', finished_at: new Date().toISOString() } : undefined,
  )
}

/** How often a worker looks for a cancel request it was not signalled about. */
const CANCEL_POLL_MS = 500

/** What runs a job's work in the worker: the command's instance, or a call job's runner (./call-job.ts). */
export type Worker = { runWork(ctx: JobContext, record: JobRecord): Promise<unknown> }

/** The worker side: claim the job, run the command's `work`, record the outcome. */
export async function runJob(options: {
  store: JobStore
  id: string
  worker: Worker
  signal: AbortSignal
  catalogue: Catalogue
}): Promise<JobRecord> {
  const { store, id, signal, catalogue } = options
  const leaseMs = isFleetStore(store) ? store.leaseMs : undefined
  const leaseUntil = () => (leaseMs ? new Date(Date.now() + leaseMs).toISOString() : null)
  const claim = `${hostname()}:${process.pid}:${Date.now()}`
  const claimed = await store.update(id, (r) =>
    r.status === 'pending' && canMove(r.status, 'running')
      ? {
          ...r,
          status: 'running',
          started_at: new Date().toISOString(),
          worker_pid: process.pid,
          worker_start: processIdentity(process.pid),
          ...(leaseMs ? { worker_host: claim, lease_until: leaseUntil() } : {}),
        }
      : undefined,
  )
  // Only the claim this call wrote lets it run: a queue that delivers a job twice runs it once.
  if (claimed.status !== 'running' || claimed.worker_pid !== process.pid || (leaseMs && claimed.worker_host !== claim))
    return claimed
  // Stopped by a signal, or by a cancel request found in the record (where no signal could be verified; a fleet's
  // worker finds it when it renews its lease).
  const stop = new AbortController()
  const onSignal = () => stop.abort(signal.reason)
  signal.addEventListener('abort', onSignal, { once: true })
  const noticeCancel = (r: JobRecord | undefined) => {
    if (r?.cancel_requested && !stop.signal.aborted)
      stop.abort(new AgentError('E_INTERRUPTED', 'the job was cancelled'))
  }
  const heartbeat = async () => {
    const now = await store
      .update(id, (r) =>
        r.status === 'running' && r.worker_host === claim ? { ...r, lease_until: leaseUntil() } : undefined,
      )
      .catch(() => undefined)
    noticeCancel(now)
  }
  const watch = leaseMs
    ? setInterval(() => void heartbeat(), Math.min(1000, leaseMs / 3))
    : setInterval(() => void store.get(id).then(noticeCancel, () => {}), CANCEL_POLL_MS)
  if (!leaseMs) watch.unref()
  let lastWrite = 0
  let emitted = false
  /** The note the work gave with progress 1: what the finished job's status says. */
  let finalNote: string | undefined
  const ctx: JobContext = {
    job_id: id,
    signal: stop.signal,
    async progress(fraction, opts = {}) {
      if (fraction >= 1 && opts.message) finalNote = opts.message
      const now = Date.now()
      if (now - lastWrite < 200 && fraction < 1) return
      lastWrite = now
      const progress = Math.max(0, Math.min(1, fraction))
      await store.update(id, (r) =>
        r.status === 'running'
          ? { ...r, progress, eta_seconds: opts.eta_seconds ?? null, message: opts.message ?? r.message }
          : undefined,
      )
    },
    async emit(...items) {
      emitted = true
      await store.appendItems(id, redactAtRest(items))
    },
  }
  try {
    const data = await options.worker.runWork(ctx, claimed)
    if (stop.signal.aborted) throw stop.signal.reason
    await store.writeResult(id, redactAtRest(data ?? null))
    return await store.update(id, (r) =>
      r.status === 'running'
        ? {
            ...r,
            status: 'succeeded',
            progress: 1,
            eta_seconds: 0,
            message: finalNote ?? 'done',
            finished_at: new Date().toISOString(),
            result_kind: emitted ? 'items' : 'data',
          }
        : undefined,
    )
  } catch (error) {
    return store.update(id, (r) => {
      if (r.status !== 'running') return undefined
      if (r.cancel_requested) return { ...r, status: 'cancelled', finished_at: new Date().toISOString() }
      return failed(
        r,
        stop.signal.aborted ? new AgentError('E_INTERRUPTED', 'the worker was stopped') : toAgentError(error),
        catalogue,
      )
    })
  } finally {
    clearInterval(watch)
    signal.removeEventListener('abort', onSignal)
  }
}
