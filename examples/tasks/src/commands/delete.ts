import {
  AgentError,
  Args,
  type BatchItem,
  batchSchema,
  idempotencyFlags,
  output,
  type Plan,
  WriteCommand,
} from 'agentcli'
import { TaskStore } from '../store.js'

type Target = { id: string; version: number }

export default class Delete extends WriteCommand<Target[]> {
  static override summary = 'Delete tasks'
  static override description =
    'Deletes one or more tasks. Reports every id in results[]; if any id fails, the envelope fails with that code and details.results lists them all. With --idempotency-key the batch resumes: run it again (--dry-run, then --confirm, same key) and only the ids that did not land are deleted; the others come back already_applied.'
  static override examples = [
    '<%= config.bin %> delete 1 2 --dry-run',
    '<%= config.bin %> delete 1 2 --confirm <confirm_token>',
    '<%= config.bin %> delete 1 2 3 --idempotency-key cleanup-1 --dry-run',
  ]
  static override flags = { ...idempotencyFlags() }
  static override args = { ids: Args.string({ required: true, multiple: true, description: 'Task ids.' }) }
  static override strict = false
  static override errorCodes = ['E_NOT_FOUND', 'E_IO'] as const
  static override output = output(batchSchema)

  async plan(): Promise<Plan<Target[]>> {
    const { argv } = await this.parse(Delete)
    const ids = [...new Set(argv as string[])]
    const all = await new TaskStore(this.config.dataDir).all()
    const plan: Required<Pick<Plan<Target[]>, 'changes' | 'targets' | 'rejected'>> & { state: Target[] } = {
      changes: [],
      targets: [],
      rejected: [],
      state: [],
    }
    for (const id of ids) {
      const task = all.find((t) => t.id === id)
      if (!task) {
        plan.rejected.push({ id, error: new AgentError('E_NOT_FOUND', `task ${id} not found`) })
        continue
      }
      plan.changes.push({ action: 'delete', resource: 'task', id, before: task, after: null })
      plan.targets.push({ id, version: task.version })
      plan.state.push({ id, version: task.version })
    }
    return plan
  }

  async apply(plan: Plan<Target[]>) {
    const items: BatchItem[] = await new TaskStore(this.config.dataDir).update((file) =>
      plan.state.map((target): BatchItem => {
        const task = file.tasks.find((t) => t.id === target.id)
        if (!task || task.version !== target.version) {
          return {
            id: target.id,
            ok: false,
            error: { code: 'E_CONFLICT', message: `task ${target.id} changed since it was previewed` },
          }
        }
        file.tasks = file.tasks.filter((t) => t.id !== target.id)
        return { id: target.id, ok: true, action: 'deleted' }
      }),
    )
    return this.batchResult([...items, ...this.rejectedItems(plan)])
  }
}
