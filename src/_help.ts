import { CommandHelp, Help } from '@oclif/core'
import { COMMAND_KINDS, kindOf } from './command-kind.js'

/** oclif's command help with a KIND section after the usage: what a call changes, as `reference` says it. */
class AgentCommandHelp extends CommandHelp {
  protected override sections(): ReturnType<CommandHelp['sections']> {
    const [usage, ...rest] = super.sections()
    const kind = kindOf(this.command as { kind?: unknown })
    const section = { header: 'KIND', generate: () => `${kind}: ${COMMAND_KINDS[kind]}` }
    return usage ? [usage, section, ...rest] : [section, ...rest]
  }
}

/** The help class of tools that declare none of their own. */
export class AgentHelp extends Help {
  protected override CommandHelpClass = AgentCommandHelp
}
