import { AgentError, Args, Flags, output, type Plan, usageError, WriteCommand } from 'agentcli'
import { STATUSES, type Task, TaskStore, view } from '../store.js'
import { taskSchema } from '../task-schema.js'

type Edit = { id: string; version: number; title?: string; status?: Task['status'] }

const taskOutput = output(taskSchema)

export default class EditTask extends WriteCommand<Edit, typeof taskOutput> {
  static override summary = 'Change a task'
  static override description =
    'Changes the title or status of one task. The confirm token is bound to the version previewed.'
  static override examples = [
    '<%= config.bin %> edit 1 --status done --dry-run',
    '<%= config.bin %> edit 1 --status done --confirm <confirm_token>',
  ]
  static override args = { id: Args.string({ required: true, description: 'Task id.' }) }
  static override flags = {
    title: Flags.string({ description: 'New title.' }),
    status: Flags.option({ options: STATUSES, description: 'New status.' })(),
  }
  static override errorCodes = ['E_NOT_FOUND', 'E_IO'] as const
  static override output = taskOutput
  static override risk = {
    action: 'update',
    blast_radius: 'one',
    reversible: true,
    undo: 'tasks edit <id> with the previous title and status (shown in the preview)',
    cost: null,
  } as const

  async plan(): Promise<Plan<Edit>> {
    const { args, flags } = await this.parse(EditTask)
    if (flags.title === undefined && flags.status === undefined)
      throw usageError('nothing to change: pass --title or --status', { allowed: ['--title', '--status'] })
    if (flags.title !== undefined && !flags.title.trim()) {
      throw new AgentError('E_VALIDATION', '--title must not be empty', {
        details: { param: '--title', got: flags.title, allowed: 'a non-empty string' },
      })
    }
    const task = await new TaskStore(this.config.dataDir).get(args.id)
    const after = {
      ...task,
      ...(flags.title === undefined ? {} : { title: flags.title.trim() }),
      ...(flags.status ? { status: flags.status } : {}),
    }
    return {
      changes: [
        {
          action: 'update',
          resource: 'task',
          id: task.id,
          before: task,
          after: { title: after.title, status: after.status },
        },
      ],
      targets: [{ id: task.id, version: task.version }],
      state: {
        id: task.id,
        version: task.version,
        ...(flags.title === undefined ? {} : { title: after.title }),
        ...(flags.status ? { status: flags.status } : {}),
      },
    }
  }

  async apply(plan: Plan<Edit>) {
    const edit = plan.state
    return new TaskStore(this.config.dataDir).update((file) => {
      const task = TaskStore.expect(file, edit.id, edit.version)
      if (edit.title !== undefined) task.title = edit.title
      if (edit.status !== undefined) task.status = edit.status
      task.version += 1
      task.updated_at = new Date().toISOString()
      return view(task)
    })
  }
}
