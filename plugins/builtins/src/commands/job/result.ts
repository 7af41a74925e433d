import { AgentCommand, AgentError, type ErrorCode, Flags, output } from 'agentcli'
import { resolveJobStore } from 'agentcli/jobs'
import { readJob } from '../../jobs.js'

export default class JobResult extends AgentCommand {
  static override summary = 'Get the result of a finished async job'
  static override description =
    "A succeeded job's data, as the submitting command defines it (large results stream as NDJSON items). A failed job answers with its error envelope; retryable says whether to resubmit the whole job."
  static override examples = ['<%= config.bin %> job result --id job_0123456789abcdef0123']
  static override flags = { id: Flags.string({ required: true, description: 'The job whose result to read.' }) }
  static override errorCodes = ['E_NOT_FOUND', 'E_CONFLICT', 'E_IO'] as const
  static override output = output((z) => z.unknown())

  async execute() {
    const { flags } = await this.parse(JobResult)
    const record = await readJob(this.config, this.catalogue, flags.id)
    const poll = `${this.config.bin} job status --id ${record.job_id}`
    if (record.status === 'failed' && record.error) {
      throw new AgentError(record.error.code as ErrorCode, record.error.message, {
        details: { ...record.error.details, job_id: record.job_id },
      })
    }
    if (record.status === 'cancelled') {
      throw new AgentError('E_CONFLICT', `job ${record.job_id} was cancelled; it has no result`, {
        details: { reason: 'job_cancelled', status: 'cancelled' },
      })
    }
    if (record.status !== 'succeeded') {
      throw new AgentError(
        'E_CONFLICT',
        `job ${record.job_id} is ${record.status}; poll \`${poll}\` until it succeeds`,
        {
          details: { reason: 'job_not_finished', status: record.status, progress: record.progress, poll },
        },
      )
    }
    const store = resolveJobStore(this.config)
    if (record.result_kind === 'items') return this.streamOf(store.readItems(record.job_id))
    return store.readResult(record.job_id)
  }
}
