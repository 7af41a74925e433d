import { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import { reconcile, runJob } from '../jobs/runtime.js'
import type { JobRecord } from '../jobs/types.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { toolEnv } from '../settings/tool-env.js'
import { openBackend } from './backend.js'

type Worker = Parameters<typeof runJob>[0]['worker']

/**
 * `tool job worker` without `--id`: a long-lived worker of the fleet. It takes jobs off the queue engine one at
 * a time, claims each in its record (a second delivery of a claimed job does nothing) and runs it. When
 * `signal` aborts (SIGTERM, SIGINT) it stops taking jobs, lets the job in hand record its outcome (the job sees
 * the same abort and ends failed, retryable), and returns.
 */
export async function serveJobs(options: {
  config: ToolConfig
  signal: AbortSignal
  catalogue: Catalogue
  /** A fresh command instance for the job's command and arguments. */
  load(record: JobRecord): Promise<Worker>
  log(message: string): void
}): Promise<{ jobs_run: number }> {
  const { config, signal, catalogue } = options
  const backend = await openBackend(config)
  if (!backend) {
    throw new AgentError('E_CONFIG', 'a long-lived job worker needs a shared state store', {
      details: {
        env: toolEnv(config.bin).name('STATE_URL'),
        fix: `set ${toolEnv(config.bin).name('STATE_URL')} to a postgres:// or redis:// URL (see docs/fleet.md); without it each job runs in a worker the tool starts itself`,
      },
    })
  }
  let ran = 0
  options.log(`worker ${process.pid} serving jobs from ${backend.store.where}`)
  await backend.work(async (id) => {
    // Stopping: leave the entry to the queue's retry, for another worker (returning would complete it unrun).
    if (signal.aborted) throw new Error(`worker ${process.pid} is stopping; job ${id} is left to another worker`)
    const record = await backend.jobs.get(id)
    if (!record) return options.log(`job ${id}: no record, skipped`)
    // A redelivered entry of a worker that was lost: the worker records the verdict that reads only compute (a
    // read changes nothing), and never runs it again.
    const current = await reconcile(backend.jobs, record, catalogue)
    if (current.status !== 'pending') return options.log(`job ${id}: ${current.status}`)
    let worker: Worker
    try {
      worker = await options.load(record)
    } catch (error) {
      // An unknown command is this job's failure, not the worker's.
      await backend.jobs.update(id, (r) =>
        r.status === 'pending'
          ? {
              ...r,
              status: 'failed',
              finished_at: new Date().toISOString(),
              error: { code: 'E_INTERNAL', message: (error as Error).message, details: {}, retryable: false },
            }
          : undefined,
      )
      return
    }
    const done = await runJob({ store: backend.jobs, id, worker, signal, catalogue })
    ran++
    options.log(`job ${id}: ${done.status}`)
  }, signal)
  return { jobs_run: ran }
}
