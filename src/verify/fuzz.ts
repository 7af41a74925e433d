import { scanGlobals } from '../universal-flags/globals.js'
import { twoAtATime } from './_private.js'
import { type Call, call, type Target } from './call.js'
import { commandFor, jsonViolations } from './invariants.js'
import type { Ref, RefCommand, RefParam } from './reference-types.js'

/** A deterministic PRNG (mulberry32), so a seed reproduces a run exactly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ODD = [
  '',
  ' ',
  '\u200b',
  '\u202e',
  'é',
  'e\u0301',
  '𝔘𝔫𝔦',
  '🦄',
  '"',
  "'",
  '\\',
  '$(id)',
  '%s',
  '\n',
  'null',
  '-1',
  '0',
  '1e309',
  'NaN',
  '../..',
  'C:\\x',
]

type Rand = () => number
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!

function value(r: Rand, p: RefParam): string {
  const roll = r()
  if (p.options && roll < 0.5) return pick(r, p.options)
  if (p.type === 'integer' && roll < 0.7) return String(pick(r, [0, 1, 5, -3, 100, 101, 2 ** 53, 7.5]))
  if (roll < 0.8) return pick(r, ODD)
  if (roll < 0.9) return 'x'.repeat(1 + Math.floor(r() * 6000))
  return `v${Math.floor(r() * 1000)}`
}

/** One random invocation derived from `reference`: valid and invalid values, unknown flags, stray words, `--`. */
export function invocation(r: Rand, ref: Ref): { args: string[]; env: Record<string, string> } {
  const commands: Array<RefCommand | undefined> = [...ref.commands, undefined]
  const command = pick(r, commands)
  const args: string[] = command ? command.path.split(' ') : [pick(r, ['nope', 'lst', 'job', '', '--', 'reference2'])]
  for (const p of command?.params ?? []) {
    if (r() < (p.required ? 0.85 : 0.4)) {
      if (p.kind === 'arg') args.push(value(r, p))
      else if (p.type === 'boolean') args.push(`--${p.name}`)
      else args.push(`--${p.name}`, value(r, p))
    }
  }
  const extras = Math.floor(r() * 3)
  for (let i = 0; i < extras; i++) {
    const roll = r()
    if (roll < 0.2) args.push(`--${pick(r, ['bogus', 'verbose', 'yes', 'force', 'no-input'])}`)
    else if (roll < 0.35) args.push(pick(r, ODD))
    else if (roll < 0.5) args.push('--format', pick(r, ['json', 'json', 'text', 'raw', 'yaml', '']))
    else if (roll < 0.6) args.push('--fields', pick(r, ['id', 'nope', 'a.b.c', ',', 'items']))
    else if (roll < 0.7) args.push(pick(r, ['--compact', '--quiet', '--json']))
    else if (roll < 0.8) args.push('--', pick(r, ODD))
    else if (roll < 0.9) args.push('--dry-run')
    else args.push('--confirm', `ct_1.${'A'.repeat(Math.floor(r() * 40))}.x`)
  }
  // `mcp --http` serves until SIGTERM, so no such call ends on its own; the MCP surface is `verify --mcp`'s. The
  // switch is dropped after the draw, so a seed reproduces the same invocations as before.
  if (command?.path === 'mcp') args.splice(0, args.length, ...args.filter((a) => a !== '--http'))
  const env: Record<string, string> = {}
  if (r() < 0.3) env.FORCE_COLOR = '1'
  if (r() < 0.3) env.COLUMNS = String(pick(r, [1, 20, 500]))
  if (r() < 0.2) env.LANG = pick(r, ['C', 'tr_TR.UTF-8', 'ja_JP.UTF-8'])
  return { args, env }
}

/** The invariants every call must keep, whatever it was given. */
export function violations(c: Call, ref: Ref): string[] {
  if (c.timedOut) return ['timed out with stdin closed']
  const beforeDashes = c.args.slice(0, c.args.includes('--') ? c.args.indexOf('--') : undefined)
  const exits = new Set(Object.values(ref.error_codes).map((e) => e.exit))
  if (beforeDashes.includes('--help') || beforeDashes.includes('-h'))
    return c.code === 0 ? [] : [`--help exited ${c.code}`]
  // The format the tool answers in, read as the tool reads it (one scan of the universal flags).
  const { format } = scanGlobals(c.args)
  if (format === 'text' || format === 'raw')
    return c.code === 0 || exits.has(c.code ?? -1) ? [] : [`exit ${c.code} is not in the catalogue`]
  return jsonViolations(c.stdout, c.code, ref, commandFor(ref, c.args))
}

/** What a fuzz run found. */
export type FuzzResult = {
  runs: number
  seed: number
  failures: Array<{ index: number; args: string[]; env: Record<string, string>; violations: string[] }>
}

/** Run `runs` seeded invocations, two at a time. */
export async function fuzz(t: Target, ref: Ref, runs: number, seed: number): Promise<FuzzResult> {
  const r = prng(seed)
  const plans = Array.from({ length: runs }, () => invocation(r, ref))
  const found = await twoAtATime(plans, async (plan, index) =>
    violations(await call(t, `fuzz:${index}`, plan.args, plan.env), ref),
  )
  const failures = plans.flatMap((plan, index) =>
    found[index]!.length ? [{ index, args: plan.args, env: plan.env, violations: found[index]! }] : [],
  )
  return { runs, seed, failures }
}
