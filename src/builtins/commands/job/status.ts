import { AgentCommand, Flags, output } from '../../../index.js'
import { jobSchema, readJob, view } from '../../jobs.js'

/** The built-in `job status`: Show the state and progress of an async job. */
export default class JobStatus extends AgentCommand {
  static override summary = 'Show the state and progress of an async job'
  static override description =
    'status is one of pending, running, succeeded, failed, cancelled. A job whose worker died is reported failed (retryable). With --wait, blocks until the job settles (progress on stderr for a person) and returns its final state; past --wait-timeout, E_TIMEOUT with the poll command, and the job keeps running.'
  static override examples = [
    '<%= config.bin %> job status --id job_0123456789abcdef0123',
    '<%= config.bin %> job status --id job_0123456789abcdef0123 --wait --wait-timeout 300',
  ]
  static override flags = {
    id: Flags.string({ required: true, description: 'The job_id returned on submission.' }),
    wait: Flags.boolean({ description: 'Block until the job has succeeded, failed or been cancelled.' }),
    'wait-timeout': Flags.integer({ min: 1, max: 86_400, default: 600, description: 'Seconds --wait waits at most.' }),
  }
  static override errorCodes = ['E_NOT_FOUND', 'E_IO', 'E_TIMEOUT'] as const
  static override output = output(jobSchema)

  async execute() {
    const { flags } = await this.parse(JobStatus)
    const read = () => readJob(this.config, this.catalogue, flags.id)
    if (!flags.wait) return view(await read())
    const { waitForJob } = await import('../../../jobs/index.js')
    const progress = this.progress({ label: flags.id, total: 100 })
    try {
      const record = await waitForJob({
        read,
        timeoutMs: flags['wait-timeout'] * 1000,
        poll: `${this.config.bin} job status --id ${flags.id}`,
        signal: this.signal,
        progress,
      })
      return view(record)
    } finally {
      progress.done()
    }
  }
}
