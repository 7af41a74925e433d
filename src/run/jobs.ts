import type { Catalogue } from '../errors/catalogue.js'
import type { SubmittedJob } from '../jobs/runtime.js'
import type { SettledResult } from '../jobs/settle.js'
import type { JobPlan } from '../jobs/types.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { remoteSubject } from '../settings/caller.js'
import { toolEnv } from '../settings/tool-env.js'

/*
 * The async-job side of one call: submitting it instead of doing the work inline, and `--wait`. The job modules
 * load only when a command submits.
 */

/** Submit this call as a job: `{job_id, status, poll, result}` at once; a detached worker does the work. */
export async function submitCall(options: {
  config: ToolConfig
  id: string
  argv: string[]
  schemaVersion: string
  plan?: JobPlan | undefined
}): Promise<SubmittedJob> {
  const { resolveJobStore, submitJob } = await import('../jobs/runtime.js')
  const owner = jobOwner(options.config)
  return submitJob({
    config: options.config,
    store: resolveJobStore(options.config),
    command: options.id,
    argv: options.argv,
    schemaVersion: options.schemaVersion,
    ...(options.plan ? { plan: options.plan } : {}),
    ...(owner ? { owner } : {}),
  })
}

/**
 * Who owns the jobs this call submits or reads: its remote subject (`tool mcp --http`), as checkpoints are owned;
 * undefined on the CLI and over stdio (the local user, who owns the store's files anyway).
 */
export function jobOwner(config: ToolConfig): string | undefined {
  const subject = remoteSubject(toolEnv(config.bin))
  return subject ? JSON.stringify(subject) : undefined
}

/** `--wait`: block until the submitted job settles (at most `timeoutSeconds`), then its result or its items. */
export async function awaitCall(options: {
  config: ToolConfig
  catalogue: Catalogue
  submitted: SubmittedJob
  timeoutSeconds: number
  signal: AbortSignal
}): Promise<SettledResult> {
  const { resolveJobStore } = await import('../jobs/runtime.js')
  const { awaitSubmitted } = await import('../jobs/settle.js')
  return awaitSubmitted({
    store: resolveJobStore(options.config),
    catalogue: options.catalogue,
    jobId: options.submitted.job_id,
    poll: options.submitted.poll,
    bin: options.config.bin,
    timeoutMs: options.timeoutSeconds * 1000,
    signal: options.signal,
  })
}
