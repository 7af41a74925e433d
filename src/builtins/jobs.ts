import { AgentError, type Catalogue, type ZodNamespace } from '../index.js'
import { type JobRecord, type JobStore, reconcile, resolveJobStore } from '../jobs/index.js'
import { jobOwner } from '../run/jobs.js'
import type { ToolConfig } from '../runtime/tool-config.js'

/** The public view of a job (worker bookkeeping left out). */
export function view(record: JobRecord) {
  return {
    job_id: record.job_id,
    command: record.command.replaceAll(':', ' '),
    status: record.status,
    progress: record.progress,
    eta_seconds: record.eta_seconds,
    message: record.message,
    submitted_at: record.submitted_at,
    started_at: record.started_at,
    finished_at: record.finished_at,
    cancel_requested: record.cancel_requested,
    error: record.error,
  }
}

/**
 * A job, read through the liveness check so a dead worker's job is reported failed, never stuck. Read commands
 * (`job status`, `job list`, `job result`) pass `persist: false`: the verdict is computed, not written — a read
 * changes nothing outside the cache dir — and the job's end is its last sign of life, the same on every read.
 * `job cancel` (a local command) records it.
 */
export async function readJob(
  config: ToolConfig,
  catalogue: Catalogue,
  id: string,
  options: { persist?: boolean } = {},
): Promise<JobRecord> {
  const store = resolveJobStore(config)
  const record = await store.get(id).catch((error: unknown) => {
    throw error instanceof AgentError ? error : new AgentError('E_IO', `cannot read job ${id}`, { cause: error })
  })
  // Another remote subject's job (or one submitted remotely, read without a subject) is unknown, as a checkpoint is.
  if (!record || record.owner !== jobOwner(config))
    throw new AgentError('E_NOT_FOUND', `job ${id} not found`, {
      details: { job_id: id },
      hint: 'list jobs with `job list`',
    })
  return reconcile(options.persist ? store : unpersisted(store, record), record, catalogue)
}

/** The store, except that an update is applied to the record in memory and never written. */
function unpersisted(store: JobStore, record: JobRecord): JobStore {
  const view: JobStore = Object.create(store)
  view.update = async (_id, change) => {
    return change(record) ?? record
  }
  return view
}

/** Output of `job status` and of each item of `job list`. */
export const jobSchema = (z: ZodNamespace) =>
  z.object({
    job_id: z.string(),
    command: z.string(),
    status: z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled']),
    progress: z.number().min(0).max(1).nullable(),
    eta_seconds: z.number().nullable(),
    message: z.string().nullable(),
    submitted_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable(),
    finished_at: z.iso.datetime().nullable(),
    cancel_requested: z.boolean(),
    error: z
      .object({
        code: z.string(),
        message: z.string(),
        details: z.record(z.string(), z.unknown()),
        retryable: z.boolean(),
      })
      .nullable(),
  })
