import { join } from 'node:path'
import {
  type CredentialRecord,
  output,
  type Plan,
  readJsonFile,
  UPSTREAM_ERRORS,
  WriteCommand,
  writeJsonAtomic,
} from 'agentcli'
import { refreshWithApi, requireApiUrl } from '../api.js'
import { STATUSES, type Status, TaskStore } from '../store.js'

type Remote = { id: string; title: string; status: Status; updated_at: string }
type Mapping = { remote: Record<string, { local_id: string; updated_at: string }> }
type Work = {
  creates: Remote[]
  updates: Array<{ remote: Remote; local_id: string; version: number }>
  unchanged: number
}

const isMapping = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && 'remote' in v

export default class Sync extends WriteCommand<Work> {
  static override summary = 'Pull tasks from the remote tasks API into the local store'
  static override description =
    'Reads every page of the remote API (TASKS_API_URL or api_url in the config file), then creates or updates local tasks. The confirm token is bound to the remote versions previewed. Without a configured API: E_CONFIG.'
  static override examples = ['<%= config.bin %> sync --dry-run', '<%= config.bin %> sync --confirm <confirm_token>']
  static override errorCodes = [...UPSTREAM_ERRORS, 'E_CONFIG', 'E_IO'] as const
  static override openWorld = true
  /** Sync overwrites local tasks with the remote's; the remote stays the source to sync from again. */
  static override risk = {
    action: 'update',
    blast_radius: 'all',
    reversible: false,
    undo: null,
    cost: 'one upstream request per page of the remote API',
  } as const
  static override output = output((z) =>
    z.object({ created: z.number().int(), updated: z.number().int(), unchanged: z.number().int() }),
  )

  private mappingPath(): string {
    return join(this.config.dataDir, 'sync-state.json')
  }

  async plan(): Promise<Plan<Work>> {
    const client = await this.upstream({ baseUrl: await requireApiUrl(this.config), auth: true })
    const remote: Remote[] = []
    let cursor: string | undefined
    do {
      const { data } = await client.get<{ items: Remote[]; next_cursor: string | null }>('v1/tasks', {
        query: { cursor, limit: 100 },
      })
      for (const item of data.items) {
        if (
          typeof item.id === 'string' &&
          typeof item.title === 'string' &&
          (STATUSES as readonly string[]).includes(item.status)
        )
          remote.push(item)
      }
      cursor = data.next_cursor ?? undefined
    } while (cursor)
    const mapping = await readJsonFile<Mapping>(this.mappingPath(), () => ({ remote: {} }), isMapping)
    const local = await new TaskStore(this.config.dataDir).all()
    const work: Work = { creates: [], updates: [], unchanged: 0 }
    const plan: Required<Pick<Plan<Work>, 'changes' | 'targets'>> = { changes: [], targets: [] }
    for (const item of remote) {
      plan.targets.push({ id: `remote:${item.id}`, version: item.updated_at })
      const known = mapping.remote[item.id]
      const task = known ? local.find((t) => t.id === known.local_id) : undefined
      if (!known || !task) {
        work.creates.push(item)
        plan.changes.push({
          action: 'create',
          resource: 'task',
          id: null,
          before: null,
          after: { title: item.title, status: item.status, remote_id: item.id },
        })
      } else if (known.updated_at !== item.updated_at) {
        work.updates.push({ remote: item, local_id: task.id, version: task.version })
        plan.targets.push({ id: task.id, version: task.version })
        plan.changes.push({
          action: 'update',
          resource: 'task',
          id: task.id,
          before: task,
          after: { title: item.title, status: item.status },
        })
      } else work.unchanged++
    }
    return { ...plan, state: work }
  }

  async apply(plan: Plan<Work>) {
    const work = plan.state
    const mapping = await readJsonFile<Mapping>(this.mappingPath(), () => ({ remote: {} }), isMapping)
    await new TaskStore(this.config.dataDir).update((file) => {
      const at = new Date().toISOString()
      for (const item of work.creates) {
        const id = String(file.next_id++)
        file.tasks.push({
          id,
          title: item.title,
          status: item.status,
          created_at: at,
          updated_at: at,
          version: 1,
          remote_id: item.id,
        })
        mapping.remote[item.id] = { local_id: id, updated_at: item.updated_at }
      }
      for (const u of work.updates) {
        const task = TaskStore.expect(file, u.local_id, u.version)
        Object.assign(task, {
          title: u.remote.title,
          status: u.remote.status,
          updated_at: at,
          version: task.version + 1,
        })
        mapping.remote[u.remote.id] = { local_id: u.local_id, updated_at: u.remote.updated_at }
      }
    })
    await writeJsonAtomic(this.mappingPath(), mapping)
    return { created: work.creates.length, updated: work.updates.length, unchanged: work.unchanged }
  }

  protected override async refreshCredential(record: CredentialRecord) {
    return refreshWithApi(await this.upstream({ baseUrl: await requireApiUrl(this.config) }), record)
  }
}
