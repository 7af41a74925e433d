import { AgentCommand, Flags, output } from 'agentcli'
import { jobSchema, readJob, view } from '../../jobs.js'

export default class JobStatus extends AgentCommand {
  static override summary = 'Show the state and progress of an async job'
  static override description =
    'status is one of pending, running, succeeded, failed, cancelled. A job whose worker died is reported failed (retryable).'
  static override examples = ['<%= config.bin %> job status --id job_0123456789abcdef0123']
  static override flags = { id: Flags.string({ required: true, description: 'The job_id returned on submission.' }) }
  static override errorCodes = ['E_NOT_FOUND', 'E_IO'] as const
  static override output = output(jobSchema)

  async execute() {
    const { flags } = await this.parse(JobStatus)
    return view(await readJob(this.config, this.catalogue, flags.id))
  }
}
