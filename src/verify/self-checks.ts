import { loadOptional } from '../runtime/optional-peers.js'
import { argvKey, NEEDS_STATE, needsInput, stateError, twoAtATime, words } from './_private.js'
import { type Call, call, json, type Target } from './call.js'
import { type Filled, itemCount, NOTHING, runnableExampleInfo, type Seen } from './examples.js'
import type { Ref, RefCommand } from './reference-types.js'
import type { Report } from './report.js'
import { type Bracketed, bracketedCall } from './side-effects.js'

type Validate = ((data: unknown) => boolean) & { errors?: unknown }

/** What {@link validator} resolves to. */
export type Validator = Awaited<ReturnType<typeof validator>>

/** Ajv with formats, loaded only by the verifier. */
export async function validator() {
  const [{ Ajv2020 }, formats] = await loadOptional('verify', () =>
    Promise.all([import('ajv/dist/2020.js'), import('ajv-formats')]),
  )
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ;(formats.default as unknown as (a: unknown) => void)(ajv)
  return ajv
}

/** How a read is run: plainly, or (when it needs input) from its first example the seen state can fill. */
function readArgv(command: RefCommand, ref: Ref, seen: Seen): Filled | undefined {
  return needsInput(command)
    ? runnableExampleInfo(command, ref.tool, seen)
    : { argv: words(command.path), placeholders: 0, guessed: false }
}

/** The reads whose output verify validates: every read but an async one. */
const validated = (ref: Ref) => ref.commands.filter((c) => c.type === 'read' && !c.async)

/** The exit code of each validated read on the empty state (placeholders filled by a value that names nothing). */
export type Baselines = Map<string, number | null>

/**
 * Run each validated read once before populating: what it answers on an empty state tells a read that needs what
 * verify cannot make (a login: the same answer before and after) from one that fails on the data. `earlier` are
 * calls the checks already made on the empty state (`reference`, the probed read, `context`; the sandbox's own
 * environment): a read among them is not run again.
 */
export async function baselines(t: Target, ref: Ref, earlier: readonly Call[] = []): Promise<Baselines> {
  const known = new Map(earlier.map((c) => [argvKey(c.args), c.code]))
  // Reads on the empty state, bracketed by no snapshot: two at a time.
  const runs = validated(ref).flatMap((command) => {
    const argv = readArgv(command, ref, NOTHING)?.argv
    return argv ? [{ path: command.path, argv }] : []
  })
  const codes = await twoAtATime(runs, async (r) =>
    known.has(argvKey(r.argv)) ? known.get(argvKey(r.argv))! : (await call(t, `empty:${r.path}`, r.argv)).code,
  )
  return new Map(runs.map((r, i) => [r.path, codes[i]!]))
}

/**
 * A read that answered a "needs state" exit (3, 4, 7, 8, 9) on the populated state: `skip` only when that is not
 * the data's doing — it answered the same on the empty state, and a not-found is not for ids the tool's own output
 * gave (every placeholder filled under its own name). Otherwise it is a read that fails on populated data: `fail`.
 */
export function needsStateVerdict(code: number, empty: number | null | undefined, filled: Filled): 'skip' | 'fail' {
  if (!NEEDS_STATE.has(code)) return 'fail'
  if (code === 3 && filled.placeholders > 0 && !filled.guessed) return 'fail'
  return empty === code ? 'skip' : 'fail'
}

/**
 * One read, on the populated state: it changes nothing outside the cache dir, and its output is what it declares.
 * `ran` is that read already run alone between snapshots on this state (populating's last reads), else it is run.
 */
async function checkRead(
  t: Target,
  command: RefCommand,
  filled: Filled,
  empty: number | null | undefined,
  validate: Validate,
  report: Report,
  ran: Bracketed | undefined,
): Promise<Call> {
  const { argv } = filled
  // A read changes nothing outside the cache dir (docs/contract.md, the read rule).
  const read = ran && argvKey(ran.out.args) === argvKey(argv) ? ran : await bracketedCall(t, command.path, argv)
  const out = read.out
  const changed = read.changed.map((p) => p.replace(t.home, '~'))
  report.add(
    `self.read_no_side_effects:${command.path}`,
    'self',
    changed.length === 0,
    changed.length
      ? `${argv.join(' ')} (a read) changed outside the cache dir: ${changed.join(', ').slice(0, 300)}`
      : `${argv.join(' ')}: nothing changed`,
  )
  const id = `self.output_valid:${command.path}`
  const needs = stateError(out)
  if (command.stream) {
    const lines = out.stdout.trimEnd().split('\n').filter(Boolean)
    const parsed = lines.map((l) => {
      try {
        return JSON.parse(l) as { type?: string; data?: unknown }
      } catch {
        return undefined
      }
    })
    const bad = parsed.findIndex((l) => !l || (l.type === 'item' && !validate(l.data)))
    const items = parsed.filter((l) => l?.type === 'item').length
    // Stopped for want of state (its last line an E_AUTH, E_CONFIG… error): skipped, as a read would be, once every
    // item it did stream is valid.
    if (needs && bad === -1) {
      report.add(id, 'self', 'skip', `needs state verify could not create (exit ${out.code}, ${needs})`)
      return out
    }
    report.add(
      id,
      'self',
      out.code === 0 && bad === -1 && parsed.at(-1)?.type === 'summary',
      bad === -1 ? `${lines.length} NDJSON lines, ${items} item(s)` : `line ${bad + 1} is not a valid item`,
    )
    return out
  }
  const doc = json(out)
  if (needs) {
    const verdict = needsStateVerdict(out.code!, empty, filled)
    report.add(
      id,
      'self',
      verdict === 'skip' ? 'skip' : false,
      verdict === 'skip'
        ? `needs state verify could not create (exit ${out.code}, ${needs}; the same on an empty state)`
        : `${argv.join(' ')} fails on the populated state: exit ${out.code}, ${needs} (on an empty state: exit ${empty ?? 'not run'}${filled.placeholders > 0 && !filled.guessed ? '; its ids came from its own output' : ''}); output not validated`,
    )
    return out
  }
  if (!doc) {
    report.add(id, 'self', 'skip', 'stdout is not one JSON document (see the envelope check)')
    return out
  }
  const valid = out.code === 0 && validate(doc.data)
  const count = itemCount(doc.data)
  const shape = count === undefined ? '' : ` (${count} item${count === 1 ? '' : 's'}${count ? '' : ': empty'})`
  report.add(
    id,
    'self',
    valid,
    out.code === 0
      ? `${argv.join(' ')}${shape}: ${JSON.stringify(validate.errors ?? 'valid').slice(0, 300)}`
      : `exit ${out.code}`,
  )
  return out
}

/**
 * Self-description: schemas compile, examples exist, and every read that can be run (plainly, or from an example
 * filled with ids seen in populated state) keeps the read rule and answers what its `output_schema` declares.
 * `ran`: the reads populating already ran alone on this state, by path. Answers each read's call on the populated
 * state, by argv ({@link argvKey}), for the checks after it that ask the same.
 */
export async function selfChecks(
  t: Target,
  ref: Ref,
  report: Report,
  seen: Seen,
  empty: Baselines,
  ran: ReadonlyMap<string, Bracketed>,
  ajv: Validator,
): Promise<Map<string, Call>> {
  const answered = new Map<string, Call>()
  for (const command of ref.commands) {
    let validate: Validate = () => true
    try {
      validate = ajv.compile(command.output_schema)
      report.add(`self.output_schema:${command.path}`, 'self', true, 'valid JSON Schema 2020-12')
    } catch (error) {
      report.add(`self.output_schema:${command.path}`, 'self', false, (error as Error).message)
    }
    report.add(
      `self.examples:${command.path}`,
      'self',
      command.examples.length > 0,
      `${command.examples.length} example(s)`,
    )
    if (command.type !== 'read' || command.async) continue
    const filled = readArgv(command, ref, seen)
    if (!filled) {
      report.add(
        `self.output_valid:${command.path}`,
        'self',
        'skip',
        'needs input that no example fills from the populated state',
      )
      continue
    }
    const out = await checkRead(t, command, filled, empty.get(command.path), validate, report, ran.get(command.path))
    answered.set(argvKey(out.args), out)
  }
  return answered
}

/**
 * Release readiness, doctor's agreement with it, and an empty changelog since the current version. `answered`: the
 * reads the self-checks made on this state, by argv; `doctor` among them is not run again.
 */
export async function readinessChecks(
  t: Target,
  ref: Ref,
  report: Report,
  answered: ReadonlyMap<string, Call> = new Map(),
): Promise<void> {
  const rr = ref.release_readiness
  const statuses = ['verified', 'missing', 'not_applicable', 'unknown']
  const rrOk =
    ['stable', 'beta', 'unpublishable'].includes(rr.level) &&
    [rr.fcc_status, rr.mock_upstream_status, rr.live_smoke_status].every((s) => statuses.includes(s))
  report.add('self.release_readiness', 'self', rrOk, `level ${rr.level}`)
  if (ref.commands.some((c) => c.path === 'doctor')) {
    const doctor = json(answered.get(argvKey(['doctor'])) ?? (await call(t, 'doctor', ['doctor'])))?.data as
      | { checks?: Array<{ check: string; status: string }> }
      | undefined
    const status = doctor?.checks?.find((c) => c.check === 'release_readiness')?.status
    const want = { stable: 'pass', beta: 'warn', unpublishable: 'fail' }[rr.level]
    report.add(
      'self.doctor_readiness',
      'self',
      status === want,
      `doctor says ${status}, reference level ${rr.level} wants ${want}`,
    )
  } else report.add('self.doctor_readiness', 'self', false, 'no doctor command')
  if (ref.commands.some((c) => c.path === 'changelog')) {
    const entries = (
      json(await call(t, 'changelog --since current', ['changelog', '--since', ref.version]))?.data as
        | { entries?: unknown[] }
        | undefined
    )?.entries
    report.add(
      'self.changelog_since_current',
      'self',
      Array.isArray(entries) && entries.length === 0,
      `changelog --since ${ref.version}: ${entries?.length ?? 'no'} entries`,
    )
  } else report.add('self.changelog_since_current', 'self', false, 'no changelog command')
}
