import { AgentCommand, AgentError, Flags, output } from '../../../index.js'
import { type JobRecord, resolveJobStore, runJob, serveJobs, type Worker } from '../../../jobs/index.js'
import { oclifConfig } from '../../../runtime/tool-config.js'

/** The built-in `job worker`: Run submitted jobs: one (started by the tool itself) or, on a fleet, all of them. */
export default class JobWorker extends AgentCommand {
  static override kind = 'local' as const
  static override summary = 'Run submitted jobs: one (started by the tool itself) or, on a fleet, all of them'
  static override description =
    'With --id, run that one job (the tool starts this detached). Without it, with a shared state store (<BIN>_STATE_URL), serve the queue as a long-lived worker until SIGTERM, which drains and stops it.'
  static override hidden = true
  static override flags = { id: Flags.string({ description: 'The one job to run.' }) }
  static override output = output((z) =>
    z.object({ job_id: z.string().nullable(), status: z.string(), jobs_run: z.number().int().optional() }),
  )

  async execute() {
    const { flags } = await this.parse(JobWorker)
    if (!flags.id) {
      const { jobs_run } = await serveJobs({
        config: this.config,
        signal: this.signal,
        catalogue: this.catalogue,
        load: (record) => this.instance(record),
        log: (m) => this.log(m),
      })
      return { job_id: null, status: 'stopped', jobs_run }
    }
    const store = resolveJobStore(this.config)
    const record = await store.get(flags.id)
    if (!record) throw new AgentError('E_NOT_FOUND', `job ${flags.id} not found`)
    const instance = await this.instance(record)
    const done = await runJob({ store, id: flags.id, worker: instance, signal: this.signal, catalogue: this.catalogue })
    return { job_id: done.job_id, status: done.status }
  }

  /**
   * A fresh instance of the job's command with its stored arguments; for a call job (a checkpoint's resume), the
   * runner of its whole command line.
   */
  private async instance(record: JobRecord): Promise<Worker> {
    if (record.call) return (await import('../../../jobs/call-job.js')).callWorker(this.config)
    const found = (await oclifConfig(this.config)).findCommand(record.command)
    if (!found) throw new AgentError('E_INTERNAL', `job ${record.job_id} names unknown command ${record.command}`)
    const Command = await found.load()
    const instance = new (Command as unknown as new (argv: string[], config: unknown) => AgentCommand)(
      record.argv,
      this.config,
    )
    await (instance as unknown as { init(): Promise<void> }).init()
    return instance
  }
}
