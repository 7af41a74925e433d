import { AgentCommand, AgentError, Flags, output } from '../../../index.js'
import { cancelJob, isFinished, resolveJobStore } from '../../../jobs/index.js'
import { jobSchema, readJob, view } from '../../jobs.js'

/** The built-in `job cancel`: Cancel an async job. */
export default class JobCancel extends AgentCommand {
  static override kind = 'local' as const
  static override summary = 'Cancel an async job'
  static override description =
    'A pending job is cancelled at once; a running job is told to stop and reports cancelled when it has. Cancelling a finished job is E_CONFLICT.'
  static override examples = ['<%= config.bin %> job cancel --id job_0123456789abcdef0123']
  static override flags = { id: Flags.string({ required: true, description: 'The job to cancel.' }) }
  static override errorCodes = ['E_NOT_FOUND', 'E_CONFLICT', 'E_IO'] as const
  static override output = output(jobSchema)

  async execute() {
    const { flags } = await this.parse(JobCancel)
    const current = await readJob(this.config, this.catalogue, flags.id, { persist: true })
    if (isFinished(current.status)) {
      throw new AgentError('E_CONFLICT', `job ${flags.id} already ${current.status}`, {
        details: { reason: 'job_finished', status: current.status },
      })
    }
    const store = resolveJobStore(this.config)
    let record = await cancelJob(store, flags.id)
    // A running worker stops on SIGTERM; wait briefly so the answer usually says cancelled.
    for (let i = 0; i < 50 && !isFinished(record.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      record = await readJob(this.config, this.catalogue, flags.id, { persist: true })
    }
    return view(record)
  }
}
