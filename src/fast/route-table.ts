/*
 * The fast path's route table (`dist/fast-routes.json`, written by `agentcli-build`) and the cheap look-up
 * `agentcli/boot` does with it before anything is loaded. No imports: this runs on every start.
 */

/** Where `agentcli-build` writes the table and the fast bundle, relative to the tool's root. */
export const FAST_FILES = { table: 'dist/fast-routes.json', bundle: 'dist/fast.cjs' } as const

/** One command the build proved simple: its flags and args as declared (for people reading the table). */
export type FastRoute = { flags: string[]; args: string[] }

/** What `dist/fast-routes.json` holds. */
export type RouteTable = {
  format: 1
  /** Every command id of the tool and every alias: a longer id that is not a fast route wins over a shorter one. */
  ids: string[]
  /** The commands proven simple, by id. */
  routes: Record<string, FastRoute>
}

const GLOBAL_VALUE = new Set(['--format', '--fields'])
const GLOBAL_SWITCH = new Set(['--json', '--compact', '--quiet', '--no-input'])
const HELP = new Set(['--help', '-h'])

function isGlobal(token: string): boolean {
  return GLOBAL_SWITCH.has(token) || GLOBAL_VALUE.has(token.split('=')[0]!)
}

/**
 * Where the argv of this start goes, as far as the table can tell without loading anything: a fast route's id,
 * `--version`, or undefined (oclif's path). Help anywhere, `--`, a bare call, an unknown command or a command
 * word that a longer non-fast id continues all go to oclif's path. The fast runner checks again with the
 * framework's own argv functions, so this only has to be conservative.
 */
export function lookUp(table: RouteTable, argv: readonly string[]): string | undefined {
  let i = 0
  for (const token of argv) if (token === '--' || HELP.has(token)) return undefined
  // Universal flags may come first (`tasks --format text list`): oclif's path moves them behind the command.
  while (i < argv.length && isGlobal(argv[i]!)) i += GLOBAL_VALUE.has(argv[i]!) ? 2 : 1
  if (argv[i] === '--version') return '--version'
  const words: string[] = []
  for (let j = i; j < argv.length && !argv[j]!.startsWith('-'); j++) words.push(argv[j]!)
  const ids = new Set(table.ids)
  for (let n = words.length; n > 0; n--) {
    const id = words.slice(0, n).join(':')
    if (ids.has(id)) return Object.hasOwn(table.routes, id) ? id : undefined
  }
  return undefined
}

/** Whether a parsed file is a route table this framework writes. */
export function isRouteTable(value: unknown): value is RouteTable {
  const t = value as RouteTable
  return (
    typeof t === 'object' &&
    t !== null &&
    t.format === 1 &&
    Array.isArray(t.ids) &&
    typeof t.routes === 'object' &&
    t.routes !== null
  )
}
