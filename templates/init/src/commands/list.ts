import { AgentCommand, output, paginationFlags } from 'agentcli'
import { noteSchema } from '../note-schema.js'
import { NoteStore } from '../store.js'

const MAX_LIMIT = 100

/** A read command: a bounded page of notes and a cursor to the next one. */
export default class List extends AgentCommand {
  static override summary = 'List notes'
  static override description = 'Notes ordered by name. Paginated: pass next_cursor back as --cursor.'
  static override examples = ['<%= config.bin %> list', '<%= config.bin %> list --limit 5 --fields name,text']
  static override flags = { ...paginationFlags({ defaultLimit: 20, maxLimit: MAX_LIMIT }) }
  static override errorCodes = ['E_IO'] as const
  static override output = output((z) =>
    z.object({
      items: z.array(noteSchema(z)),
      count: z.number().int(),
      next_cursor: z.string().nullable(),
      has_more: z.boolean(),
    }),
  )

  async execute() {
    const { flags } = await this.parse(List)
    const notes = await new NoteStore(this.config.dataDir).all()
    return this.page(notes, { limit: flags.limit, cursor: flags.cursor, maxLimit: MAX_LIMIT })
  }
}
