import { AgentCommand, Flags, output, type Progress } from 'agentcli'
import { STATUSES, type Task, TaskStore, view } from '../store.js'
import { taskSchema } from '../task-schema.js'

const COLUMNS = ['id', 'title', 'status', 'created_at', 'updated_at', 'version'] as const

function csvCell(value: unknown): string {
  const text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

const taskOutput = output(taskSchema)

export default class Export extends AgentCommand<typeof taskOutput> {
  static override summary = 'Stream every task'
  static override description =
    'NDJSON: one item line per task (ordered by id), then a summary line with the count. --format raw writes CSV with a header row instead.'
  static override examples = ['<%= config.bin %> export', '<%= config.bin %> export --format raw > tasks.csv']
  static override flags = { status: Flags.option({ options: STATUSES, description: 'Only tasks with this status.' })() }
  static override stream = true
  static override raw = true
  static override errorCodes = ['E_IO'] as const
  static override output = taskOutput

  async execute() {
    const { flags } = await this.parse(Export)
    const tasks = (await new TaskStore(this.config.dataDir).all()).filter(
      (t) => !flags.status || t.status === flags.status,
    )
    if (this.globals.format === 'raw') return this.raw(csv(tasks))
    return items(tasks, this.progress({ label: 'export', total: tasks.length }))
  }
}

async function* items(tasks: Task[], progress: Progress): AsyncIterable<Task> {
  try {
    for (const task of tasks) {
      yield view(task)
      progress.tick()
    }
  } finally {
    progress.done()
  }
}

async function* csv(tasks: Task[]): AsyncIterable<string> {
  yield `${COLUMNS.join(',')}\n`
  for (const task of tasks) yield `${COLUMNS.map((c) => csvCell(task[c])).join(',')}\n`
}
