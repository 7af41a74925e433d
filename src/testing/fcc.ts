import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { COMMANDS } from '../builtins/index.js'
import { runTool } from './run-tool.js'

/** What the FCC guard found. */
export type FccReport = {
  /** The tool's declared `release_readiness.fcc_status`. */
  fcc_status: string
  /** The tool's own leaf commands: the ones the guard requires a test for. */
  leaves: string[]
  /** Built-in commands in the reference, left to the framework's own tests. */
  builtins: string[]
  /** The leaf commands some test invokes. */
  covered: string[]
  /** The leaf commands no test invokes. */
  missing: string[]
}

/** Options of {@link fccGuard}. */
export type FccOptions = {
  /** The tool's bin (its `reference` is enumerated). */
  bin: string
  /** Where the command-level tests live (searched recursively for `*.test.ts`/`*.test.js`/`*.test.mjs`). */
  testDir: string
  /** Environment for the `reference` call. */
  env?: Record<string, string>
}

function testFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (name === 'node_modules' || name.startsWith('.')) continue
    if (statSync(path).isDirectory()) out.push(...testFiles(path))
    else if (/\.test\.(ts|js|mjs)$/.test(name)) out.push(path)
  }
  return out
}

function escapeRegExp(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * A test invokes a command when its argv literal starts with the command's words: `['job', 'status', …]`.
 * That is how command-level tests call a real bin; a mention in a test name does not count.
 */
export function invokes(source: string, path: string): boolean {
  const words = path.split(' ').map((w) => `['"\`]${escapeRegExp(w)}['"\`]`)
  return new RegExp(`\\[\\s*${words.join('\\s*,\\s*')}\\s*[,\\]]`).test(source)
}

/** Compare the leaves of a reference with the invocations found in test sources. */
export function coverage(
  leaves: readonly string[],
  sources: readonly string[],
): Pick<FccReport, 'covered' | 'missing'> {
  const covered = leaves.filter((leaf) => sources.some((s) => invokes(s, leaf)))
  return { covered, missing: leaves.filter((leaf) => !covered.includes(leaf)) }
}

/**
 * The Functional Contract Coverage guard (spec 002 §13): enumerate every leaf command from the tool's live
 * `reference` and require a command-level test that invokes each. When the tool declares `fcc_status: verified`,
 * a gap (or zero leaves) throws; an honest `missing` is reported, not enforced.
 */
export async function fccGuard(options: FccOptions): Promise<FccReport> {
  const run = await runTool(options.bin, ['reference', '--compact'], { env: options.env ?? {} })
  const envelope = run.json as
    | { ok?: boolean; data?: { commands: Array<{ path: string }>; release_readiness: { fcc_status: string } } }
    | undefined
  if (!envelope?.ok || !envelope.data) throw new Error(`reference failed: ${run.stdout || run.stderr}`)
  const known = builtinPaths()
  const paths = envelope.data.commands.map((c) => c.path).sort()
  const leaves = paths.filter((p) => !known.has(p))
  const sources = testFiles(options.testDir).map((f) => readFileSync(f, 'utf8'))
  return enforceFcc({
    fcc_status: envelope.data.release_readiness.fcc_status,
    leaves,
    builtins: paths.filter((p) => known.has(p)),
    ...coverage(leaves, sources),
  })
}

/** The built-ins' command paths. The framework's own tests cover them; a tool's tests cover the tool's commands. */
function builtinPaths(): Set<string> {
  return new Set(Object.keys(COMMANDS).map((id) => id.replaceAll(':', ' ')))
}

/** Throw when a `verified` claim is not backed: zero leaves, or a leaf no test invokes. */
export function enforceFcc<R extends Omit<FccReport, 'builtins'>>(report: R): R {
  if (report.fcc_status !== 'verified') return report
  if (report.leaves.length === 0) throw new Error('FCC guard: reference lists no commands')
  if (report.missing.length > 0)
    throw new Error(`FCC guard: fcc_status is verified but no command-level test invokes: ${report.missing.join(', ')}`)
  return report
}
