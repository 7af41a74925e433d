import { AgentCommand, Args, output } from 'agentcli'
import { buildReference, compactReference } from 'agentcli/describe'
import { referenceSchema } from '../schemas.js'

export default class Reference extends AgentCommand {
  static override summary = 'Describe this tool for agents: commands, flags, output schemas, error codes'
  static override description =
    'The machine-readable description of the tool. Agents read it before anything else. Commands are sorted by path; hidden commands are left out. Name command paths (`reference edit`, `reference login resume`, several at once) to get only those commands, in full. --compact returns the same information in a fraction of the bytes: universal flags once, defaults left out, shared parameters under param_defs and shared schema parts under $defs ($ref), an object schema without type/required/additionalProperties being closed with every property required; expandReference() in agentcli/describe rebuilds the full document.'
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
    const reference = await buildReference(this.config, this.catalogue, { paths: argv as string[] })
    return this.globals.compact ? compactReference(reference) : reference
  }
}
