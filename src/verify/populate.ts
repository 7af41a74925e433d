import { errorOf, stateReads, twoAtATime, words } from './_private.js'
import { type Call, call, json, type Target } from './call.js'
import { exampleArgv, fill, harvest, itemCount, type Seen, varied } from './examples.js'
import type { Ref, RefCommand } from './reference-types.js'
import type { Report } from './report.js'
import { type Bracketed, bracketedCall, changes, snapshot, stateBefore } from './side-effects.js'

/**
 * What populating gave the checks: the values seen (for placeholders), every path a confirmed write made, and the
 * last round of state reads, each run alone between snapshots (by command path): the self-checks judge those very
 * calls instead of making them again on the same state.
 */
export type Populated = { seen: Seen; owned: Set<string>; reads: Map<string, Bracketed> }

/** Writes that take state away, or replace the tool itself: never confirmed while populating. */
const UNPOPULATING = new Set(['delete', 'remove', 'rm', 'destroy', 'purge', 'drop', 'clear', 'reset', 'uninstall'])
const populating = (c: RefCommand) =>
  c.type === 'write' && c.path !== 'update' && !UNPOPULATING.has(words(c.path).at(-1)!)

/** A write's `--dry-run` example as words, without the flag, placeholders still in (undefined if it has none). */
function dryRunWords(command: RefCommand, tool: string): string[] | undefined {
  const example = command.examples.find((e) => e.includes('--dry-run'))
  return example ? exampleArgv(example, tool).filter((w) => w !== '--dry-run') : undefined
}

/**
 * Each item gets a key of its own: an idempotency key replays the first item, and the example's own key is left
 * unused so that the write gate's token-less call meets a fresh write, not a replay.
 */
function freshKey(argv: string[], n: number): string[] {
  const at = argv.indexOf('--idempotency-key')
  return at < 0 || at + 1 >= argv.length ? argv : argv.map((w, i) => (i === at + 1 ? `${w}-verify${n}` : w))
}

/**
 * Dry-run, then confirm with the token it issued. The outcome, in words, and whether it landed. What a landed
 * write created or changed is recorded in `owned`: the state only a write may change (the `local` check's).
 */
async function dryRunConfirm(
  t: Target,
  label: string,
  argv: string[],
  owned: Set<string>,
): Promise<{ landed: boolean; why: string }> {
  const before = await stateBefore(t)
  const dry = await call(t, `populate:${label} --dry-run`, [...argv, '--dry-run'])
  const token = (json(dry)?.data as { confirm_token?: string } | undefined)?.confirm_token
  if (!token)
    return { landed: false, why: `dry-run gave no token (exit ${dry.code}, ${errorOf(dry)?.code ?? 'no code'})` }
  const done = await call(t, `populate:${label} --confirm`, [...argv, '--confirm', token])
  if (done.code === 0)
    for (const c of changes(before, snapshot(t.home, t.env.XDG_CACHE_HOME!))) if (c[0] !== '-') owned.add(c.slice(1))
  return done.code === 0
    ? { landed: true, why: 'confirmed' }
    : { landed: false, why: `confirm with its own token → exit ${done.code}, ${errorOf(done)?.code ?? 'no code'}` }
}

/**
 * Harvest what the state reads answer. Between rounds they are bracketed by no snapshot: two at a time. The last
 * round (`reads` given) is the populated state the self-checks look at: each read runs alone between snapshots,
 * under the self-check's own label, and is kept for it.
 */
async function harvestReads(t: Target, ref: Ref, seen: Seen, reads?: Map<string, Bracketed>): Promise<number> {
  const commands = stateReads(ref.commands)
  let outs: Call[] = []
  if (reads)
    for (const c of commands) {
      const read = await bracketedCall(t, c.path, words(c.path))
      reads.set(c.path, read)
      outs.push(read.out)
    }
  else outs = await twoAtATime(commands, (c) => call(t, `populate:read ${c.path}`, words(c.path)))
  let items = 0
  for (const out of outs) {
    if (out.code !== 0) continue
    const data = json(out)?.data
    harvest(data, seen)
    items += itemCount(data) ?? 0
  }
  return items
}

/** One `--setup` line: run as given; `--confirm <confirm_token>` means "dry-run it first and use its token". */
async function setup(
  t: Target,
  ref: Ref,
  line: string,
  { seen, owned }: Populated,
): Promise<{ ok: boolean; why: string }> {
  const argv = fill(exampleArgv(line, ref.tool), seen.set('confirm_token', '<confirm_token>'))
  seen.delete('confirm_token')
  if (!argv) return { ok: false, why: 'a placeholder no earlier output filled' }
  const at = argv.indexOf('--confirm')
  if (at >= 0 && argv[at + 1] === '<confirm_token>') {
    const r = await dryRunConfirm(
      t,
      `setup ${line}`,
      argv.filter((_, i) => i !== at && i !== at + 1),
      owned,
    )
    return { ok: r.landed, why: r.why }
  }
  const c = await call(t, `populate:setup ${line}`, argv)
  return { ok: c.code === 0, why: `exit ${c.code}${errorOf(c)?.code ? `, ${errorOf(c)?.code}` : ''}` }
}

/**
 * Give the checks state to look at: the author's `--setup` lines, then every write that adds state, twice (a
 * second item proves `--limit`), from its own `--dry-run` example, dry-run → confirm. The second run varies the
 * example's free-text values (a tool that dedupes by title would otherwise make one item), and falls back to the
 * example as written when the varied one does not land. Placeholders (`<id>`) are filled from what the reads
 * answer. Returns what was seen, for the read checks' own placeholders, and what the writes made.
 */
export async function populate(t: Target, ref: Ref, report: Report, setups: string[]): Promise<Populated> {
  const state: Populated = { seen: new Map(), owned: new Set(), reads: new Map() }
  const { seen, owned } = state
  for (const [i, line] of setups.entries()) {
    const r = await setup(t, ref, line, state)
    report.add(`populate.setup:${i + 1}`, 'populate', r.ok, `${line} → ${r.why}`)
    if (r.ok) await harvestReads(t, ref, seen)
  }
  const pending = ref.commands.filter(populating)
  for (let round = 0; round < 2 && pending.length > 0; round++) {
    if (round > 0) await harvestReads(t, ref, seen)
    for (const command of [...pending]) {
      const words = dryRunWords(command, ref.tool)
      const argv = words && fill(words, seen)
      if (!argv && round === 0) continue
      pending.splice(pending.indexOf(command), 1)
      const id = `populate.write:${command.path}`
      if (!words || !argv) {
        report.add(id, 'populate', 'skip', 'no --dry-run example, or a placeholder no output filled')
        continue
      }
      const first = await dryRunConfirm(t, command.path, freshKey(argv, 1), owned)
      if (!first.landed) {
        const needsState = /exit (3|4|7|8|9),/.test(first.why) || first.why.startsWith('dry-run')
        report.add(id, 'populate', needsState ? 'skip' : false, `${argv.join(' ')}: ${first.why}`)
        continue
      }
      const other = varied(words, command)
      const otherArgv = other && fill(other, seen)
      let second = otherArgv ? await dryRunConfirm(t, command.path, freshKey(otherArgv, 2), owned) : undefined
      const variedLanded = second?.landed === true
      if (!variedLanded) second = await dryRunConfirm(t, command.path, freshKey(argv, 2), owned)
      report.add(
        id,
        'populate',
        true,
        `${argv.join(' ')}: confirmed${second?.landed ? ` twice${variedLanded ? ` (then ${otherArgv!.join(' ')})` : ''}` : ''}`,
      )
    }
  }
  const items = await harvestReads(t, ref, seen, state.reads)
  report.add(
    'populate.state',
    'populate',
    items > 0 ? true : 'skip',
    items > 0
      ? `the reads now list ${items} item(s)`
      : 'no list has items: read checks ran on empty state (add --setup lines that create some)',
  )
  return state
}
