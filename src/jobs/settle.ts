import { AgentError } from '../errors/agent-error.js'
import type { Catalogue, ErrorCode } from '../errors/catalogue.js'
import { invocation } from '../runtime/invocation.js'
import type { JobRecord, JobStore } from './types.js'

/** What a settled job answers: its data, or (a large result) its items to stream. A failure is thrown. */
export type SettledResult = { kind: 'data'; data: unknown } | { kind: 'items'; items: AsyncIterable<unknown> }

/**
 * The final answer of a job, as `job result` and `--wait` give it: a succeeded job's result; a failed job's own
 * error (its code, so `retryable` says whether to resubmit) with the job id; a cancelled one `E_CONFLICT`; one
 * still running `E_CONFLICT` with the command that polls it.
 */
export async function settledResult(store: JobStore, record: JobRecord, bin: string): Promise<SettledResult> {
  if (record.status === 'failed' && record.error) {
    throw new AgentError(record.error.code as ErrorCode, record.error.message, {
      details: { ...record.error.details, job_id: record.job_id },
    })
  }
  if (record.status === 'cancelled') {
    throw new AgentError('E_CONFLICT', `job ${record.job_id} was cancelled; it has no result`, {
      details: { reason: 'job_cancelled', status: 'cancelled', job_id: record.job_id },
    })
  }
  if (record.status !== 'succeeded') {
    const poll = `${invocation(bin)} job status --id ${record.job_id}`
    throw new AgentError('E_CONFLICT', `job ${record.job_id} is ${record.status}; poll \`${poll}\` until it succeeds`, {
      details: { reason: 'job_not_finished', status: record.status, progress: record.progress, poll },
    })
  }
  if (record.result_kind === 'items') return { kind: 'items', items: store.readItems(record.job_id) }
  return { kind: 'data', data: await store.readResult(record.job_id) }
}

/**
 * `--wait` on an async command: block until the job it just submitted settles and answer as `job result` would.
 * Past the timeout, `E_TIMEOUT` with the job id and the command that polls it; the job keeps running.
 */
export async function awaitSubmitted(options: {
  store: JobStore
  catalogue: Catalogue
  jobId: string
  poll: string
  bin: string
  timeoutMs: number
  signal?: AbortSignal
}): Promise<SettledResult> {
  const { reconcile } = await import('./runtime.js')
  const { waitForJob } = await import('./wait.js')
  const read = async () => {
    const record = await options.store.get(options.jobId)
    if (!record)
      throw new AgentError('E_NOT_FOUND', `job ${options.jobId} not found`, { details: { job_id: options.jobId } })
    return reconcile(options.store, record, options.catalogue)
  }
  const record = await waitForJob({
    read,
    timeoutMs: options.timeoutMs,
    poll: options.poll,
    ...(options.signal ? { signal: options.signal } : {}),
  })
  return settledResult(options.store, record, options.bin)
}
