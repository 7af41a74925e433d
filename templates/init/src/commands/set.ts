import { AgentError, Args, Flags, output, type Plan, WriteCommand } from 'agentcli'
import { noteSchema } from '../note-schema.js'
import { NoteStore } from '../store.js'

type SetState = { name: string; text: string; version: number }

const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/

/** A write command: --dry-run previews and returns a confirm token bound to the note's version; --confirm applies. */
export default class SetNote extends WriteCommand<SetState> {
  static override summary = 'Create or replace a note'
  static override description =
    'Writes the text of one note. The confirm token is bound to the version previewed: a note changed in between is refused.'
  static override examples = [
    '<%= config.bin %> set greeting --text hello --dry-run',
    '<%= config.bin %> set greeting --text hello --confirm <confirm_token>',
  ]
  static override args = { name: Args.string({ required: true, description: 'Note name (a-z, 0-9, -).' }) }
  static override flags = { text: Flags.string({ required: true, description: 'The new text.' }) }
  static override errorCodes = ['E_CONFLICT', 'E_IO'] as const
  static override output = output(noteSchema)

  async plan(): Promise<Plan<SetState>> {
    const { args, flags } = await this.parse(SetNote)
    if (!NAME.test(args.name))
      throw new AgentError('E_VALIDATION', `invalid note name '${args.name}'`, {
        details: { param: 'name', got: args.name, allowed: NAME.source },
      })
    const current = await new NoteStore(this.config.dataDir).find(args.name)
    const version = current?.version ?? 0
    return {
      changes: [
        {
          action: current ? 'update' : 'create',
          resource: 'note',
          id: args.name,
          before: current ?? null,
          after: { name: args.name, text: flags.text },
        },
      ],
      targets: [{ id: args.name, version }],
      state: { name: args.name, text: flags.text, version },
    }
  }

  async apply(plan: Plan<SetState>) {
    const { name, text, version } = plan.state!
    return new NoteStore(this.config.dataDir).put(name, text, version)
  }
}
