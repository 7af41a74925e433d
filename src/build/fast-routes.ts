import { TABLE_START } from '../fast/boot.js'
import type { FastRoute, RouteTable } from '../fast/route-table.js'

// biome-ignore lint/suspicious/noExplicitAny: command classes and flag definitions as oclif holds them
type Loose = Record<string, any>
type ToolPjson = { oclif?: Loose }

/** What the lite `Command` overrides nothing of: a fast command's own classes may not override these. */
const LIFE_CYCLE = ['run', '_run', 'init', 'catch', 'finally', 'parse', 'jsonEnabled', 'log', 'warn']
/** Flag and arg features the route table does not take: their oclif code paths (env, stdin, relations…) stay there. */
const FLAG_FEATURES = [
  'multiple',
  'env',
  'deprecated',
  'deprecateAliases',
  'aliases',
  'charAliases',
  'relationships',
  'dependsOn',
  'exclusive',
  'exactlyOne',
  'atLeastOne',
  'combinable',
  'allowStdin',
  'delimiter',
  'defaultHelp',
]
const ARG_FEATURES = ['multiple', 'options']
/** `package.json` oclif settings under which oclif's path does more than Config.load + runCommand. */
const TOOL_FEATURES = ['hooks', 'plugins', 'devPlugins', 'jitPlugins', 'helpClass', 'flexibleTaxonomy', 'binAliases']

/**
 * Why a command cannot take the fast path, or undefined when the build proves it simple: a `read` (not a
 * stream, an async job or raw bytes), an `AgentCommand` whose own classes override no step of the life cycle,
 * strict, not deprecated and without aliases, whose flags and args are plain booleans and options (defaults,
 * required, a `parse` function, a single char). Anything else is served by oclif's path, always.
 */
export function whyNotFast(command: Loose): string | undefined {
  if ((command.kind ?? 'read') !== 'read') return `kind ${command.kind}`
  for (const key of ['stream', 'async', 'raw', 'enableJsonFlag', 'hasDynamicHelp', 'deprecateAliases'])
    if (command[key]) return key
  if (command.strict === false || command['--'] !== undefined) return 'not strict'
  if (command.state === 'deprecated' || command.deprecationOptions) return 'deprecated'
  if ((command.aliases ?? []).length > 0 || (command.hiddenAliases ?? []).length > 0) return 'aliases'
  let base = command
  for (; base && base.name !== 'AgentCommand'; base = Object.getPrototypeOf(base)) {
    if (base.name === 'WriteCommand') return 'a WriteCommand'
    for (const step of LIFE_CYCLE) if (Object.hasOwn(base.prototype, step)) return `overrides ${step}()`
  }
  if (!base) return 'not an AgentCommand'
  const flags = { ...(command.baseFlags ?? {}), ...(command.flags ?? {}) }
  for (const [name, flag] of Object.entries(flags as Record<string, Loose>)) {
    if (flag.type !== 'boolean' && flag.type !== 'option') return `--${name} is of type ${flag.type}`
    for (const feature of FLAG_FEATURES) if (has(flag[feature])) return `--${name} uses ${feature}`
    if (flag.char !== undefined && !/^[a-zA-Z]$/.test(flag.char)) return `--${name} has char ${flag.char}`
  }
  for (const [name, arg] of Object.entries((command.args ?? {}) as Record<string, Loose>))
    for (const feature of ARG_FEATURES) if (has(arg[feature])) return `arg ${name} uses ${feature}`
  return undefined
}

function has(value: unknown): boolean {
  return value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0)
}

/** Why the tool as a whole cannot take the fast path (its hooks, plugins, help class…), or undefined. */
export function whyToolNotFast(pjson: ToolPjson): string | undefined {
  const oclif = pjson.oclif ?? {}
  for (const key of TOOL_FEATURES) {
    const value = oclif[key]
    if (value !== undefined && has(value) && !(typeof value === 'object' && Object.keys(value).length === 0))
      return `oclif.${key}`
  }
  return undefined
}

/**
 * The route table of a tool: every id and alias it has, and the commands proven simple. `eligible` says which
 * commands may be considered at all (the built-ins read the tool's whole config and manifest: never fast).
 */
export function routeTable(
  pjson: ToolPjson,
  commands: Record<string, Loose>,
  eligible: (id: string) => boolean,
): { table: RouteTable; skipped: Record<string, string> } {
  const ids = new Set<string>()
  const routes: Record<string, FastRoute> = {}
  const skipped: Record<string, string> = {}
  const tool = whyToolNotFast(pjson)
  for (const [id, command] of Object.entries(commands)) {
    ids.add(id)
    for (const alias of [...(command.aliases ?? []), ...(command.hiddenAliases ?? [])]) ids.add(alias)
    const why = tool ?? (eligible(id) ? whyNotFast(command) : 'a built-in')
    if (why) skipped[id] = why
    else
      routes[id] = {
        flags: Object.keys({ ...(command.baseFlags ?? {}), ...(command.flags ?? {}) }),
        args: Object.keys(command.args ?? {}),
      }
  }
  return { table: { format: 2, ids: [...ids].sort(), routes }, skipped }
}

/**
 * The table as `dist/fast-routes.json`: JSON, but laid out one id and one route per line after a first line
 * holding the format, which is what `idKind` in `src/fast/boot.ts` searches (a start reads one line's worth of
 * the table, not a parse of all of it).
 */
export function tableText(table: RouteTable): string {
  const ids = table.ids.map((id) => JSON.stringify(id))
  const routes = Object.entries(table.routes).map(([id, route]) => `${JSON.stringify(id)}:${JSON.stringify(route)}`)
  return `${TABLE_START}"ids":[\n${ids.join(',\n')}],\n"routes":{\n${routes.join(',\n')}}}\n`
}
