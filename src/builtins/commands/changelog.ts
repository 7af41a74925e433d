import { changesSince, readToolMeta } from '../../describe/index.js'
import { AgentCommand, Flags, output } from '../../index.js'
import { changelogSchema } from '../schemas.js'

/** The built-in `changelog`: What changed between versions. */
export default class Changelog extends AgentCommand {
  static override summary = 'What changed between versions'
  static override description =
    'Entries from the CHANGELOG.md embedded at build time, newest first. After an update, read `changelog --since <previous version>`.'
  static override examples = ['<%= config.bin %> changelog', '<%= config.bin %> changelog --since 0.1.0']
  static override flags = {
    since: Flags.string({ description: 'Only versions strictly newer than this one (semver).', helpValue: 'x.y.z' }),
  }
  static override errorCodes = ['E_IO'] as const
  static override output = output(changelogSchema)

  async execute() {
    const { flags } = await this.parse(Changelog)
    const meta = await readToolMeta(this.config.root)
    return {
      current_version: this.config.version,
      since: flags.since ?? null,
      entries: changesSince(meta.changelog, flags.since),
    }
  }
}
