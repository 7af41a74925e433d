import { AgentCommand, output } from 'agentcli'
import { buildReference } from 'agentcli/describe'
import { referenceSchema } from '../schemas.js'

export default class Reference extends AgentCommand {
  static override summary = 'Describe this tool for agents: commands, flags, output schemas, error codes'
  static override description =
    'The machine-readable description of the tool. Agents read it before anything else. Commands are sorted by path; hidden commands are left out.'
  static override examples = [
    '<%= config.bin %> reference',
    '<%= config.bin %> reference --fields commands.path,commands.type',
  ]
  static override output = output(referenceSchema)

  async execute() {
    return buildReference(this.config, this.catalogue)
  }
}
