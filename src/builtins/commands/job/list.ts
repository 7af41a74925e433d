import { AgentCommand, Flags, output, paginationFlags } from '../../../index.js'
import { resolveJobStore } from '../../../jobs/index.js'
import { jobOwner } from '../../../run/jobs.js'
import { jobSchema, readJob, view } from '../../jobs.js'

const MAX = 100

/** The built-in `job list`: List async jobs, newest first. */
export default class JobList extends AgentCommand {
  static override summary = 'List async jobs, newest first'
  static override examples = [
    '<%= config.bin %> job list',
    '<%= config.bin %> job list --status running --fields job_id,status',
  ]
  static override flags = {
    status: Flags.option({
      options: ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const,
      description: 'Only jobs in this state.',
    })(),
    ...paginationFlags({ defaultLimit: 20, maxLimit: MAX }),
  }
  static override errorCodes = ['E_IO'] as const
  static override output = output((z) =>
    z.object({
      items: z.array(jobSchema(z)),
      count: z.number().int(),
      next_cursor: z.string().nullable(),
      has_more: z.boolean(),
    }),
  )

  async execute() {
    const { flags } = await this.parse(JobList)
    // Only the jobs this caller may read: its own subject's over `tool mcp --http` (readJob refuses the others).
    const owner = jobOwner(this.config)
    const records = (await resolveJobStore(this.config).list()).filter((r) => r.owner === owner)
    const fresh = await Promise.all(records.map((r) => readJob(this.config, this.catalogue, r.job_id)))
    const jobs = fresh.filter((r) => !flags.status || r.status === flags.status).map(view)
    return this.page(jobs, {
      limit: flags.limit,
      cursor: flags.cursor,
      maxLimit: MAX,
      sortKey: (job) => [job.submitted_at, job.job_id],
      order: 'desc',
    })
  }
}
