import { builtin } from '../boot/_builtin.js'
import type { HeldSignals } from '../boot/early-signals.js'
import type { RunOptions } from '../entry.js'
import { FAST_FILES, isRouteTable, lookUp, type RouteTable } from './route-table.js'
import type { FastOptions, HandOver } from './run.js'

const { readFileSync, statSync } = builtin<typeof import('node:fs')>('node:fs')
const { join } = builtin<typeof import('node:path')>('node:path')

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

function readTable(file: string): RouteTable | undefined {
  try {
    const table: unknown = JSON.parse(readFileSync(file, 'utf8'))
    return isRouteTable(table) ? table : undefined
  } catch {
    // No table (a tool built before the fast path, or without a bundle): oclif's path, as before.
    return undefined
  }
}
