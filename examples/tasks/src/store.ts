import { join } from 'node:path'
import { AgentError, readJsonFile, withFileLock, writeJsonAtomic } from 'agentcli'

/** Task status. */
export const STATUSES = ['open', 'done'] as const
/** One of {@link STATUSES}. */
export type Status = (typeof STATUSES)[number]

/** A task as stored and as printed. `version` moves on every change, for confirm-token binding. */
export type Task = {
  id: string
  title: string
  status: Status
  created_at: string
  updated_at: string
  version: number
  /** Set on tasks pulled by `sync`: their id at the remote API. */
  remote_id?: string
}

/** What commands print: a task pulled from the remote API says that its title is a third party's text. */
export type TaskView = Task & { _untrusted?: string[] }

/** The printed form of a task (spec 002 §10, `_untrusted`). */
export function view(task: Task): TaskView {
  return task.remote_id ? { ...task, _untrusted: ['title'] } : { ...task }
}

/** The store file's content. */
export type StoreFile = { schema: 1; next_id: number; tasks: Task[] }

function isTask(value: unknown): value is Task {
  const t = value as Task
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.id === 'string' &&
    typeof t.title === 'string' &&
    (STATUSES as readonly string[]).includes(t.status) &&
    typeof t.created_at === 'string' &&
    typeof t.updated_at === 'string' &&
    typeof t.version === 'number'
  )
}

function isStoreFile(value: unknown): value is StoreFile {
  const s = value as StoreFile
  return (
    typeof s === 'object' &&
    s !== null &&
    s.schema === 1 &&
    Number.isSafeInteger(s.next_id) &&
    Array.isArray(s.tasks) &&
    s.tasks.every(isTask)
  )
}

const empty = (): StoreFile => ({ schema: 1, next_id: 1, tasks: [] })

/** The tasks file in the tool's data directory. */
export class TaskStore {
  readonly path: string

  constructor(dataDir: string) {
    this.path = join(dataDir, 'tasks.json')
  }

  /** All tasks, ordered by numeric id (the documented list order). */
  async all(): Promise<Task[]> {
    const file = await readJsonFile(this.path, empty, isStoreFile)
    return [...file.tasks].sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id))
  }

  /** One task, or `E_NOT_FOUND`. */
  async get(id: string): Promise<Task> {
    const task = (await this.all()).find((t) => t.id === id)
    if (!task)
      throw new AgentError('E_NOT_FOUND', `task ${id} not found`, {
        details: { id },
        hint: 'run `tasks list` to see task ids',
      })
    return task
  }

  /** The task as it is now, or `E_CONFLICT` (`state_drift`) if it moved since `version` was read. */
  static expect(file: StoreFile, id: string, version: number): Task {
    const task = file.tasks.find((t) => t.id === id)
    if (!task || task.version !== version) {
      throw new AgentError('E_CONFLICT', `task ${id} changed since it was previewed`, {
        details: { reason: 'state_drift', id, fix: 'run the command again with --dry-run' },
      })
    }
    return task
  }

  /**
   * Read-modify-write under a cross-process lock; the file is replaced atomically. With the run's `signal`, a wait
   * for the lock stops with `E_INTERRUPTED`, nothing read or written.
   */
  async update<T>(fn: (file: StoreFile) => T | Promise<T>, options: { signal?: AbortSignal } = {}): Promise<T> {
    return withFileLock(
      `${this.path}`,
      async () => {
        const file = await readJsonFile(this.path, empty, isStoreFile)
        const result = await fn(file)
        await writeJsonAtomic(this.path, file)
        return result
      },
      options,
    )
  }
}
