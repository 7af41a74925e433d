import { join } from 'node:path'
import { AgentError, readJsonFile, withFileLock, writeJsonAtomic } from 'agentcli'

/** A note as stored and printed. `version` moves on every change, so a confirm token binds to what it previewed. */
export type Note = { name: string; text: string; version: number; updated_at: string }

type NotesFile = { schema: 1; notes: Note[] }

const empty = (): NotesFile => ({ schema: 1, notes: [] })

function isNotesFile(value: unknown): value is NotesFile {
  const file = value as NotesFile
  return typeof file === 'object' && file !== null && file.schema === 1 && Array.isArray(file.notes)
}

/** The notes file in the tool's data directory: the tool's local state (replace it with your upstream). */
export class NoteStore {
  readonly path: string

  constructor(dataDir: string) {
    this.path = join(dataDir, 'notes.json')
  }

  /** Every note, ordered by name (the documented list order, so cursors stay stable). */
  async all(): Promise<Note[]> {
    const file = await readJsonFile(this.path, empty, isNotesFile)
    return [...file.notes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  /** One note, or undefined. */
  async find(name: string): Promise<Note | undefined> {
    return (await this.all()).find((n) => n.name === name)
  }

  /** Write a note if it is still at `version` (0: absent), else `E_CONFLICT`; under a lock, replaced atomically. */
  async put(name: string, text: string, version: number): Promise<Note> {
    return withFileLock(this.path, async () => {
      const file = await readJsonFile(this.path, empty, isNotesFile)
      const current = file.notes.find((n) => n.name === name)
      if ((current?.version ?? 0) !== version)
        throw new AgentError('E_CONFLICT', `note ${name} changed since it was previewed`, {
          details: { reason: 'state_drift', name, fix: 'run the command again with --dry-run' },
        })
      const note = { name, text, version: version + 1, updated_at: new Date().toISOString() }
      file.notes = [...file.notes.filter((n) => n.name !== name), note]
      await writeJsonAtomic(this.path, file)
      return note
    })
  }
}
