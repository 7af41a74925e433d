import { AgentCommand, Flags, output, paginationFlags } from 'agentcli'
import { STATUSES, TaskStore, view } from '../store.js'
import { taskSchema } from '../task-schema.js'

const MAX_LIMIT = 100

const listOutput = output((z) =>
  z.object({
    items: z.array(taskSchema(z)),
    count: z.number().int(),
    next_cursor: z.string().nullable(),
    has_more: z.boolean(),
  }),
)

export default class List extends AgentCommand<typeof listOutput> {
  static override summary = 'List tasks'
  static override description =
    'Tasks ordered by id, ascending. Paginated: pass next_cursor back as --cursor with the same --status and --limit (a cursor is bound to its query).'
  static override examples = [
    '<%= config.bin %> list',
    '<%= config.bin %> list --status open --limit 5 --fields id,title',
  ]
  static override flags = {
    status: Flags.option({ options: STATUSES, description: 'Only tasks with this status.' })(),
    ...paginationFlags({ defaultLimit: 20, maxLimit: MAX_LIMIT }),
  }
  static override errorCodes = ['E_IO'] as const
  static override output = listOutput

  async execute() {
    const { flags } = await this.parse(List)
    const store = new TaskStore(this.config.dataDir)
    const tasks = (await store.all()).filter((t) => !flags.status || t.status === flags.status)
    return this.page(tasks.map(view), {
      limit: flags.limit,
      cursor: flags.cursor,
      maxLimit: MAX_LIMIT,
      sortKey: (task) => task.id,
    })
  }
}
