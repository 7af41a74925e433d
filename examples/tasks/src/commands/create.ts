import { AgentError, Flags, idempotencyFlags, output, type Plan, WriteCommand } from 'agentcli'
import { TaskStore } from '../store.js'
import { taskSchema } from '../task-schema.js'

const taskOutput = output(taskSchema)

export default class Create extends WriteCommand<{ title: string }, typeof taskOutput> {
  static override summary = 'Create a task'
  static override description =
    'Creates an open task. Safe to retry with --idempotency-key: the first result is returned again.'
  static override examples = [
    '<%= config.bin %> create --title "Write the docs" --idempotency-key k1 --dry-run',
    '<%= config.bin %> create --title "Write the docs" --idempotency-key k1 --confirm <confirm_token>',
  ]
  static override flags = {
    title: Flags.string({ description: 'Title of the new task (asked for on a terminal when left out).' }),
    name: Flags.string({ description: 'Old name of --title.', deprecated: { to: '--title', version: '1.0.0' } }),
    ...idempotencyFlags(),
  }
  static override errorCodes = ['E_IO'] as const
  /** Create only adds a task: nothing existing is deleted or overwritten. */
  static override risk = {
    action: 'create',
    blast_radius: 'one',
    reversible: true,
    undo: 'tasks delete <id>',
    cost: null,
  } as const
  static override output = taskOutput

  async plan(): Promise<Plan<{ title: string }>> {
    const { flags } = await this.parse(Create)
    // Off a terminal (every agent) or under --no-input this is E_USAGE naming --title: never a prompt that hangs.
    const given = flags.title ?? flags.name ?? (await this.ask({ message: 'Title of the new task?', flag: '--title' }))
    const title = given.trim()
    if (!title)
      throw new AgentError('E_VALIDATION', '--title must not be empty', {
        details: { param: '--title', got: given, allowed: 'a non-empty string' },
      })
    return {
      changes: [{ action: 'create', resource: 'task', id: null, before: null, after: { title, status: 'open' } }],
      state: { title },
    }
  }

  async apply(plan: Plan<{ title: string }>) {
    return new TaskStore(this.config.dataDir).update((file) => {
      const at = new Date().toISOString()
      const task = {
        id: String(file.next_id),
        title: plan.state.title,
        status: 'open' as const,
        created_at: at,
        updated_at: at,
        version: 1,
      }
      file.next_id += 1
      file.tasks.push(task)
      return task
    })
  }
}
