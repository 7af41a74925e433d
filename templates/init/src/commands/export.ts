import { AgentCommand, output } from 'agentcli'
import { noteSchema } from '../note-schema.js'
import { type Note, NoteStore } from '../store.js'

/** A stream command: NDJSON, one item line per note, then a summary line. */
export default class Export extends AgentCommand {
  static override summary = 'Stream every note'
  static override description = 'NDJSON: one item line per note (ordered by name), then a summary line with the count.'
  static override examples = ['<%= config.bin %> export', '<%= config.bin %> export --fields name']
  static override stream = true
  static override errorCodes = ['E_IO'] as const
  static override output = output(noteSchema)

  async execute() {
    return items(await new NoteStore(this.config.dataDir).all())
  }
}

async function* items(notes: Note[]): AsyncIterable<Note> {
  yield* notes
}
