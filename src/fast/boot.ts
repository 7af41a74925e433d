import { builtin } from '../boot/builtin.js'
import type { HeldSignals } from '../boot/early-signals.js'
import { leadingWords, longestMatch } from '../route/match.js'
import type { RunOptions } from '../runtime/entry.js'
import { isUniversalToken, UNIVERSAL_VALUE_TOKENS } from '../universal-flags/table.js'
import type { FastOptions, HandOver } from './run.js'

const { readFileSync, statSync } = builtin<typeof import('node:fs')>('node:fs')
const { join } = builtin<typeof import('node:path')>('node:path')

/** Where `agentcli-build` writes the table and the fast bundle, relative to the tool's root. */
export const FAST_FILES = { table: 'dist/fast-routes.json', bundle: 'dist/fast.cjs' } as const

type FastBundle = { runFast(root: string, options: FastOptions): Promise<HandOver>; commands: FastOptions['commands'] }
type Loader = (file: string, stat: { size: number; mtimeMs: number }) => unknown

/**
 * `agentcli/boot`'s first try: when the route table says this argv is a fast route (or `--version`), run it from
 * the fast bundle, which holds no oclif. Resolves to undefined when the table does not take the argv (nothing
 * was loaded but the table), or with the signals held again when the fast runner handed the run over; a run the
 * fast path serves never resolves (the session exits). `AGENTCLI_FAST=0` always takes oclif's path (for the
 * differential test, and to compare the two).
 */
export async function startFast(
  dir: string,
  bundle: string,
  options: RunOptions & { held: HeldSignals },
  load: Loader,
): Promise<HandOver | undefined> {
  if (process.env.AGENTCLI_FAST === '0' || process.platform !== 'linux') return undefined
  const table = readTable(join(dir, FAST_FILES.table))
  if (!table || !lookUp(table, options.argv ?? process.argv.slice(2))) return undefined
  const file = join(dir, FAST_FILES.bundle)
  const stat = statSync(file, { throwIfNoEntry: false })
  const fast = stat ? (load(file, stat) as FastBundle | undefined) : undefined
  if (typeof fast?.runFast !== 'function') return undefined
  return fast.runFast(dir, { ...options, bundle, table, commands: fast.commands })
}

/**
 * The table's text, not parsed: {@link idKind} finds the one line a start needs. Only its first line is checked
 * (a table of another layout or format finds nothing: oclif's path, as before).
 */
function readTable(file: string): string | undefined {
  try {
    const text = readFileSync(file, 'utf8')
    return text.startsWith(TABLE_START) ? text : undefined
  } catch {
    // No table (a tool built before the fast path, or without a bundle): oclif's path, as before.
    return undefined
  }
}

/** How `dist/fast-routes.json` begins: its format, on a line of its own. */
export const TABLE_START = '{"format":2,\n'

/**
 * What the route table says of one command id: a fast `route`, another `id` of the tool (a command that is not
 * a fast route, or an alias), or undefined. Each id and each route is a line of its own (`"id",` in `ids`,
 * `"id":{…}` in `routes`), and an id holds no newline, so one search of the text per id answers it.
 */
export function idKind(table: string, id: string): 'route' | 'id' | undefined {
  const line = `\n${JSON.stringify(id)}`
  if (table.includes(`${line}:{`)) return 'route'
  return table.includes(`${line},`) || table.includes(`${line}]`) ? 'id' : undefined
}

const HELP = new Set(['--help', '-h'])

/**
 * Where the argv of this start goes, as far as the table can tell without loading anything: a fast route's id,
 * `--version`, or undefined (oclif's path). Help anywhere, `--`, a bare call, an unknown command or a command
 * word that a longer non-fast id continues all go to oclif's path. The fast runner checks again with the
 * framework's own argv functions, so this only has to be conservative.
 */
export function lookUp(table: string, argv: readonly string[]): string | undefined {
  let i = 0
  for (const token of argv) if (token === '--' || HELP.has(token)) return undefined
  // Universal flags may come first (`tasks --format text list`): oclif's path moves them behind the command.
  while (i < argv.length && isUniversalToken(argv[i]!)) i += UNIVERSAL_VALUE_TOKENS.has(argv[i]!) ? 2 : 1
  if (argv[i] === '--version') return '--version'
  const match = longestMatch(leadingWords(argv.slice(i)), (id) => idKind(table, id))
  return match?.found === 'route' ? match.id : undefined
}
