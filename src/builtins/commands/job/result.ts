import { AgentCommand, Flags, output } from '../../../index.js'
import { resolveJobStore, settledResult } from '../../../jobs/index.js'
import { readJob } from '../../jobs.js'

/** The built-in `job result`: Get the result of a finished async job. */
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
    // The same answer `--wait` gives on the submitting command (settledResult, src/jobs/settle.ts).
    const settled = await settledResult(resolveJobStore(this.config), record, this.config.bin)
    return settled.kind === 'items' ? this.streamOf(settled.items) : settled.data
  }
}
