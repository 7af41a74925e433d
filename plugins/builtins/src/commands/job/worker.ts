import { AgentCommand, AgentError, Flags, output } from 'agentcli'
import { resolveJobStore, runJob } from 'agentcli/jobs'

export default class JobWorker extends AgentCommand {
  static override kind = 'local' as const
  static override summary = 'Run a submitted job (started by the tool itself, detached)'
  static override hidden = true
  static override flags = { id: Flags.string({ required: true }) }
  static override output = output((z) => z.object({ job_id: z.string(), status: z.string() }))

  async execute() {
    const { flags } = await this.parse(JobWorker)
    const store = resolveJobStore(this.config)
    const record = await store.get(flags.id)
    if (!record) throw new AgentError('E_NOT_FOUND', `job ${flags.id} not found`)
    const found = this.config.findCommand(record.command)
    if (!found) throw new AgentError('E_INTERNAL', `job ${flags.id} names unknown command ${record.command}`)
    const Command = await found.load()
    const instance = new (Command as unknown as new (argv: string[], config: unknown) => AgentCommand)(
      record.argv,
      this.config,
    )
    await (instance as unknown as { init(): Promise<void> }).init()
    const done = await runJob({ store, id: flags.id, worker: instance, signal: this.signal, catalogue: this.catalogue })
    return { job_id: done.job_id, status: done.status }
  }
}
