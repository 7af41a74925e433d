import { AgentCommand, Args, output } from 'agentcli'
import { TaskStore, view } from '../store.js'
import { taskSchema } from '../task-schema.js'

const taskOutput = output(taskSchema)

export default class Get extends AgentCommand<typeof taskOutput> {
  static override summary = 'Show one task'
  static override examples = ['<%= config.bin %> get 1', '<%= config.bin %> get 1 --fields title,status']
  static override args = { id: Args.string({ required: true, description: 'Task id.' }) }
  static override errorCodes = ['E_NOT_FOUND', 'E_IO'] as const
  static override output = taskOutput

  async execute() {
    const { args } = await this.parse(Get)
    return view(await new TaskStore(this.config.dataDir).get(args.id))
  }
}
