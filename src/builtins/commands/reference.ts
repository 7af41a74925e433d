import { buildReference, compactReference } from '../../describe/index.js'
import { AgentCommand, Args, output } from '../../index.js'
import { oclifConfig } from '../../runtime/tool-config.js'
import { referenceSchema } from '../schemas.js'

export default class Reference extends AgentCommand {
  static override summary = 'Describe this tool for agents: commands, flags, output schemas, error codes'
  static override description =
    'The machine-readable description of the tool; agents read it first. Commands are sorted by path; hidden ones are left out. `reference <command path…>`: only those commands, in full. `--compact`: the same, lossless, in far fewer bytes (docs/contract.md); `expandReference()` of agentcli restores it.'
  static override examples = [
    '<%= config.bin %> reference --compact',
    '<%= config.bin %> reference list',
    '<%= config.bin %> reference --fields commands.path,commands.type',
  ]
  static override strict = false
  static override args = {
    path: Args.string({ description: 'Command paths to describe (all when none); words of one path may be separate.' }),
  }
  static override output = output(referenceSchema)

  async execute() {
    const { argv } = await this.parse(Reference)
    const reference = await buildReference(await oclifConfig(this.config), this.catalogue, { paths: argv as string[] })
    return this.globals.compact ? compactReference(reference) : reference
  }
}
