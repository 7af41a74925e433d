import { AgentError } from '../errors/agent-error.js'
import type { Progress } from '../output/progress.js'
import { isFinished, type JobRecord } from './types.js'

/** Options of {@link waitForJob}. */
export type WaitOptions = {
  /** Read the job's current record (through the liveness check, so a dead worker's job settles too). */
  read: () => Promise<JobRecord>
  /** Give up after this long with `E_TIMEOUT` (the job keeps running). */
  timeoutMs: number
  /** The command that polls the job, for the timeout's `details.poll`. */
  poll: string
  /** Stop waiting (the job keeps running). */
  signal?: AbortSignal
  /** Shows the job's progress (0-100) and message to a person. */
  progress?: Progress
  /** Time between two reads. */
  pollMs?: number
}

/** Wait until a job settles (succeeded, failed, cancelled) and return its final record. */
export async function waitForJob(options: WaitOptions): Promise<JobRecord> {
  const deadline = Date.now() + options.timeoutMs
  const pollMs = options.pollMs ?? 200
  for (;;) {
    const record = await options.read()
    if (record.progress !== null)
      options.progress?.update(Math.round(record.progress * 100), {
        // Settled, the last line says so itself ("done, 100/100 in 3s"): the job's own note is for the way there.
        label: record.message && !isFinished(record.status) ? `${record.job_id}: ${record.message}` : record.job_id,
      })
    if (isFinished(record.status)) return record
    if (options.signal?.aborted) throw options.signal.reason
    if (Date.now() + pollMs > deadline)
      throw new AgentError('E_TIMEOUT', `job ${record.job_id} is still ${record.status}; it keeps running`, {
        details: { job_id: record.job_id, status: record.status, progress: record.progress, poll: options.poll },
      })
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
}
