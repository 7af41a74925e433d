import { CommandHelp, Help } from '@oclif/core/help'
import { COMMAND_KINDS, kindOf } from '../command-kind.js'
import { flagDeprecation, type OclifDeprecation } from '../schema/deprecation.js'
import { type Risk, riskText, UNDECLARED_RISK } from '../write/risk.js'

type Described = {
  flags?: Record<string, { deprecated?: OclifDeprecation | false }>
}

function deprecationLines(c: Described): string[] {
  const lines: string[] = []
  for (const [name, def] of Object.entries(c.flags ?? {})) {
    const d = flagDeprecation(name, def)
    if (d) lines.push(`--${name}: ${d.message}`)
  }
  return lines
}

/** oclif's command help with a KIND section after the usage: what a call changes, as `reference` says it. */
class AgentCommandHelp extends CommandHelp {
  protected override sections(): ReturnType<CommandHelp['sections']> {
    const [usage, ...rest] = super.sections()
    const kind = kindOf(this.command as { kind?: unknown })
    const section = { header: 'KIND', generate: () => `${kind}: ${COMMAND_KINDS[kind]}` }
    const out = usage ? [usage, section, ...rest] : [section, ...rest]
    // The risk as the build validated it (the manifest's description), else as the class declares it.
    const c = this.command as { agent?: { risk?: Risk }; risk?: Risk }
    const risk = c.agent?.risk ?? (kind === 'write' ? (c.risk ?? UNDECLARED_RISK) : undefined)
    if (risk) out.splice(out.indexOf(section) + 1, 0, { header: 'RISK', generate: () => riskText(risk) })
    // oclif states a deprecated command at the top of its help; its deprecated flags are listed here.
    const lines = deprecationLines(this.command as never)
    if (lines.length > 0) out.push({ header: 'DEPRECATED', generate: () => lines.join('\n') })
    return out
  }
}

/** The help class of tools that declare none of their own. */
export class AgentHelp extends Help {
  protected override CommandHelpClass = AgentCommandHelp
}
