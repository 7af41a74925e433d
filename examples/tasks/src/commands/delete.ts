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
import { type Task, TaskStore } from '../store.js'

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
  /** A deleted task is gone: the store keeps no history. */
  static override risk = { action: 'delete', blast_radius: 'set', reversible: false, undo: null, cost: null } as const

  async plan(): Promise<Plan<Target[]>> {
    const { argv } = await this.parse(Delete)
    const ids = [...new Set(argv as string[])]
    const byId = new Map((await new TaskStore(this.config.dataDir).all()).map((t) => [t.id, t]))
    const plan: Required<Pick<Plan<Target[]>, 'changes' | 'targets' | 'rejected'>> & { state: Target[] } = {
      changes: [],
      targets: [],
      rejected: [],
      state: [],
    }
    await this.mapItems(ids, (id) => {
      const task = byId.get(id)
      if (!task) {
        plan.rejected.push({ id, error: new AgentError('E_NOT_FOUND', `task ${id} not found`) })
        return
      }
      plan.changes.push({ action: 'delete', resource: 'task', id, before: task, after: null })
      plan.targets.push({ id, version: task.version })
      plan.state.push({ id, version: task.version })
    })
    return plan
  }

  async apply(plan: Plan<Target[]>) {
    const items: BatchItem[] = await new TaskStore(this.config.dataDir).update(
      async (file) => {
        // One index of the store and one pass over it at the end: a batch costs its size, not its size squared.
        const byId = new Map<string, Task>()
        for (const task of file.tasks) if (!byId.has(task.id)) byId.set(task.id, task)
        const gone = new Set<string>()
        // A signal stops this loop before the store is written: then nothing is deleted and the token is given back.
        const done = await this.mapItems(plan.state, (target): BatchItem => {
          const task = byId.get(target.id)
          if (!task || gone.has(target.id) || task.version !== target.version) {
            return {
              id: target.id,
              ok: false,
              error: { code: 'E_CONFLICT', message: `task ${target.id} changed since it was previewed` },
            }
          }
          gone.add(target.id)
          return { id: target.id, ok: true, action: 'deleted' }
        })
        if (gone.size > 0) file.tasks = file.tasks.filter((t) => !gone.has(t.id))
        return done
      },
      { signal: this.signal },
    )
    return this.batchResult([...items, ...this.rejectedItems(plan)])
  }
}
