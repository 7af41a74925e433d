import { TABLE_START } from '../fast/boot.js'
import type { FastRoute, RouteTable } from '../fast/route-table.js'

// biome-ignore lint/suspicious/noExplicitAny: command classes and flag definitions as oclif holds them
type Loose = Record<string, any>
type ToolPjson = { oclif?: Loose }

/** What the lite `Command` overrides nothing of: a fast command's own classes may not override these. */
const LIFE_CYCLE = ['run', '_run', 'init', 'catch', 'finally', 'parse', 'jsonEnabled', 'log', 'warn']
/**
 * What a write's author implements or may override: the flow (`src/write/`) calls them. Every other method of
 * `WriteCommand` and the classes under it (execute, submit, the ledgers' plumbing, oclif's life cycle) is a
 * framework step: a write that overrides one is served by oclif's path.
 */
const WRITE_HOOKS = new Set([
  'plan',
  'apply',
  'principal',
  'toolIdentity',
  'secretSource',
  'tokenLedger',
  'idempotencyLedger',
])
/**
 * Flag and arg features the route table does not take: their oclif code paths (env, stdin, relations…) stay there.
 * A flag's `aliases` are the parser's own (bundled); a `deprecated` flag is fine until it is used: the lite
 * `Command` hands the run over before its warning.
 */
const FLAG_FEATURES = [
  'multiple',
  'env',
  'deprecateAliases',
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
const ARG_FEATURES = ['options']
/** `package.json` oclif settings under which oclif's path does more than Config.load + runCommand. */
const TOOL_FEATURES = ['hooks', 'plugins', 'devPlugins', 'jitPlugins', 'helpClass', 'flexibleTaxonomy', 'binAliases']

/**
 * Why a command cannot take the fast path, or undefined when the build proves it simple: a `read` (not a
 * stream, an async job or raw bytes), an `AgentCommand` whose own classes override no step of the life cycle,
 * or a `write` that is a `WriteCommand` whose own classes override only the author hooks ({@link WRITE_HOOKS});
 * strict, not deprecated and without aliases, whose flags and args are plain booleans and options (defaults,
 * required, a `parse` function, a single char, aliases). Anything else is served by oclif's path, always.
 */
export function whyNotFast(command: Loose): string | undefined {
  const kind = command.kind ?? 'read'
  if (kind !== 'read' && kind !== 'write') return `kind ${kind}`
  for (const key of ['stream', 'async', 'raw', 'enableJsonFlag', 'hasDynamicHelp', 'deprecateAliases'])
    if (command[key]) return key
  // A non-strict command's extra words and a variadic arg are the parser's own (`argv`); `--` is never routed.
  if (command['--'] !== undefined) return 'sets --'
  if (command.state === 'deprecated' || command.deprecationOptions) return 'deprecated'
  if ((command.aliases ?? []).length > 0 || (command.hiddenAliases ?? []).length > 0) return 'aliases'
  const why = kind === 'write' ? whyNotSimpleWrite(command) : whyNotSimpleRead(command)
  if (why) return why
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

function whyNotSimpleRead(command: Loose): string | undefined {
  let base = command
  for (; base && base.name !== 'AgentCommand'; base = Object.getPrototypeOf(base)) {
    if (base.name === 'WriteCommand') return 'a WriteCommand of kind read'
    for (const step of LIFE_CYCLE) if (Object.hasOwn(base.prototype, step)) return `overrides ${step}()`
  }
  return base ? undefined : 'not an AgentCommand'
}

function whyNotSimpleWrite(command: Loose): string | undefined {
  const own: Loose[] = []
  let base = command
  for (; base && base.name !== 'WriteCommand'; base = Object.getPrototypeOf(base)) own.push(base)
  if (!base) return 'a write that is not a WriteCommand'
  // Every method the framework defines, from WriteCommand down to oclif's Command.
  const framework = new Set<string>()
  for (let p = base.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const name of Object.getOwnPropertyNames(p)) framework.add(name)
  for (const cls of own)
    for (const name of Object.getOwnPropertyNames(cls.prototype))
      if (name !== 'constructor' && framework.has(name) && !WRITE_HOOKS.has(name)) return `overrides ${name}()`
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
