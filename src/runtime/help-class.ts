import type { Command, Interfaces } from '@oclif/core'
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

/**
 * The help class of tools that declare none of their own. The two lists oclif's help sorts on every call are the
 * same lists in linear time: oclif's own getters compare every topic and command with every other (`_topics`,
 * `uniqBy`), some 30 ms of a `--help` at 1000 commands.
 */
export class AgentHelp extends Help {
  protected override CommandHelpClass = AgentCommandHelp

  protected override get sortedCommands(): Command.Loadable[] {
    const commands = this.config.commands.filter((c) => this.opts.all || !c.hidden)
    return lastOfEach(
      commands.sort((a, b) => compare(a.id, b.id)),
      (c) => c.id,
    )
  }

  protected override get sortedTopics(): Interfaces.Topic[] {
    const all = this.config.topics
    // oclif's test: a topic has a child when some topic's name contains the topic's name and a separator.
    const parents = new Set<string>()
    for (const { name } of all)
      for (let colon = name.indexOf(':'); colon >= 0; colon = name.indexOf(':', colon + 1))
        for (let start = 0; start <= colon; start++) parents.add(name.slice(start, colon))
    const topics = all.filter((t) => parents.has(t.name) && (this.opts.all || !t.hidden))
    return lastOfEach(
      topics.sort((a, b) => compare(a.name, b.name)),
      (t) => t.name,
    )
  }
}

/** oclif's order of two sort keys (`util.compare`, for the strings ids and names are). */
function compare(a: unknown, b: unknown): number {
  const x = (a === undefined ? 0 : a) as string
  const y = (b === undefined ? 0 : b) as string
  return x < y ? -1 : x > y ? 1 : 0
}

/** oclif's `uniqBy`: of the items with one key, the last one, in their order. */
function lastOfEach<T>(items: T[], key: (item: T) => string): T[] {
  const last = new Map<string, number>()
  for (const [i, item] of items.entries()) last.set(key(item), i)
  return items.filter((item, i) => last.get(key(item)) === i)
}
