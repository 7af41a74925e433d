import { parse as shellParse } from 'shell-quote'
import { CORE_ERRORS } from '../errors/catalogue.js'
import { type Call, call, json, type Target } from './call.js'
import { commandFor, jsonViolations } from './invariants.js'
import { REFERENCE_KEYS, type Ref, type RefCommand } from './reference-types.js'
import type { Report } from './report.js'
import { changes, snapshot } from './side-effects.js'

const words = (path: string) => path.split(' ')
const needsInput = (c: RefCommand) => c.params.some((p) => p.required)
const plainRead = (c: RefCommand) => c.type === 'read' && !needsInput(c) && !c.stream && !c.async && !c.raw

function errorOf(c: Call): { code?: string; retryable?: boolean } | undefined {
  return (json(c)?.error as { code?: string; retryable?: boolean } | undefined) ?? undefined
}

function expectError(report: Report, id: string, c: Call, codes: string[], exit: number): void {
  const got = errorOf(c)?.code
  report.add(
    id,
    'exit',
    c.code === exit && got !== undefined && codes.includes(got),
    `${c.args.join(' ')} → exit ${c.code}, code ${got ?? 'none'} (want ${codes.join('|')}, exit ${exit})`,
  )
}

/** Exits that mean "this needs a login, an upstream, a target or a person", not "this is broken". */
const NEEDS_STATE = new Set([3, 4, 7, 8, 9])

const strip = (doc: Record<string, unknown> | undefined) =>
  JSON.stringify({ ...doc, meta: { ...(doc?.meta as object), duration_ms: 0 } })

/** Ajv with formats, loaded only by the verifier. */
async function validator() {
  const [{ Ajv2020 }, formats] = await Promise.all([import('ajv/dist/2020.js'), import('ajv-formats')])
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ;(formats.default as unknown as (a: unknown) => void)(ajv)
  return ajv
}

/** Run every check against a target discovered through its `reference`. */
export async function runChecks(t: Target, report: Report): Promise<Ref | undefined> {
  const refCall = await call(t, 'reference', ['reference'])
  const refDoc = json(refCall)
  const ref = refDoc?.data as Ref | undefined
  const missing = REFERENCE_KEYS.filter((k) => !ref || !(k in ref))
  report.add(
    'self.reference_keys',
    'self',
    refCall.code === 0 && missing.length === 0,
    missing.length ? `reference lacks ${missing.join(', ')}` : 'all required keys present',
  )
  if (!ref || missing.length > 0) return undefined

  // Exit codes of the failures every CLI can be asked for.
  const probe = ref.commands.find(plainRead) ?? ref.commands.find((c) => c.path === 'reference')!
  expectError(
    report,
    'exit.unknown_command',
    await call(t, 'unknown command', ['agentcli-verify-no-such-command']),
    ['E_USAGE'],
    2,
  )
  expectError(
    report,
    'exit.unknown_flag',
    await call(t, 'unknown flag', [...words(probe.path), '--agentcli-verify-bogus']),
    ['E_USAGE'],
    2,
  )
  const withRequired = ref.commands.find((c) => c.params.some((p) => p.required))
  if (withRequired)
    expectError(
      report,
      'exit.missing_argument',
      await call(t, 'missing argument', words(withRequired.path)),
      ['E_USAGE'],
      2,
    )
  else report.add('exit.missing_argument', 'exit', 'skip', 'no command has a required parameter')
  const withEnum = ref.commands.find(
    (c) => c.params.some((p) => p.kind === 'flag' && p.options && p.options.length > 0) && !needsInput(c),
  )
  if (withEnum) {
    const flag = withEnum.params.find((p) => p.kind === 'flag' && p.options && p.options.length > 0)!
    expectError(
      report,
      'exit.bad_enum',
      await call(t, 'bad enum', [...words(withEnum.path), `--${flag.name}`, 'agentcli-verify-not-an-option']),
      ['E_VALIDATION'],
      2,
    )
  } else report.add('exit.bad_enum', 'exit', 'skip', 'no runnable command has an enum flag')
  expectError(
    report,
    'exit.bad_format',
    await call(t, 'bad format', [...words(probe.path), '--format', 'yaml']),
    ['E_VALIDATION', 'E_USAGE'],
    2,
  )
  const notRaw = ref.commands.find((c) => !c.raw && plainRead(c)) ?? probe
  expectError(
    report,
    'exit.raw_on_non_raw',
    await call(t, 'raw on a non-raw command', [...words(notRaw.path), '--format', 'raw']),
    ['E_USAGE'],
    2,
  )

  // Universal flags.
  const base = await call(t, probe.path, words(probe.path))
  const alias = await call(t, `${probe.path} --json`, [...words(probe.path), '--json'])
  report.add(
    'flags.json_alias',
    'flags',
    strip(json(base)) === strip(json(alias)),
    '--json and --format json give the same document',
  )
  const text = await call(t, `${probe.path} --format text`, [...words(probe.path), '--format', 'text'])
  report.add(
    'flags.text_format',
    'flags',
    text.code === base.code && json(text)?.ok === undefined,
    `text exit ${text.code} (json ${base.code}); envelope on stdout: ${json(text)?.ok !== undefined}`,
  )
  const quiet = await call(t, `${probe.path} --quiet`, [...words(probe.path), '--quiet'])
  report.add('flags.quiet', 'flags', strip(json(quiet)) === strip(json(base)), '--quiet leaves stdout unchanged')
  expectError(
    report,
    'flags.bad_field',
    await call(t, 'bad --fields', [...words(probe.path), '--fields', 'agentcli_verify_no_such_field']),
    ['E_VALIDATION'],
    2,
  )
  const version = json(await call(t, '--version', ['--version']))?.data as { version?: string } | undefined
  const context = ref.commands.some((c) => c.path === 'context')
    ? (json(await call(t, 'context', ['context']))?.data as { version?: string } | undefined)
    : undefined
  report.add(
    'flags.version',
    'flags',
    version?.version === ref.version && (context === undefined || context.version === ref.version),
    `--version ${version?.version}, reference ${ref.version}, context ${context?.version ?? 'n/a'}`,
  )
  const help = await call(t, '--help', ['--help'])
  report.add('flags.help', 'flags', help.code === 0, `--help exits ${help.code}`)

  // Self-description.
  const ajv = await validator()
  for (const command of ref.commands) {
    let validate: ((data: unknown) => boolean) & { errors?: unknown } = () => true
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
    if (command.type !== 'read' || needsInput(command) || command.async) continue
    // A read changes nothing outside the cache dir (docs/contract.md, the read rule).
    const before = snapshot(t.home, t.env.XDG_CACHE_HOME!)
    const out = await call(t, command.path, words(command.path))
    const changed = changes(before, snapshot(t.home, t.env.XDG_CACHE_HOME!)).map((p) => p.replace(t.home, '~'))
    report.add(
      `self.read_no_side_effects:${command.path}`,
      'self',
      changed.length === 0,
      changed.length ? `changed outside the cache dir: ${changed.join(', ').slice(0, 300)}` : 'nothing changed',
    )
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
      report.add(
        `self.output_valid:${command.path}`,
        'self',
        out.code === 0 && bad === -1 && parsed.at(-1)?.type === 'summary',
        bad === -1 ? `${lines.length} NDJSON lines` : `line ${bad + 1} is not a valid item`,
      )
      continue
    }
    const doc = json(out)
    if (NEEDS_STATE.has(out.code ?? -1) && doc) {
      report.add(
        `self.output_valid:${command.path}`,
        'self',
        'skip',
        `needs state a fresh home lacks (exit ${out.code}, ${errorOf(out)?.code})`,
      )
      continue
    }
    if (!doc) {
      report.add(
        `self.output_valid:${command.path}`,
        'self',
        'skip',
        'stdout is not one JSON document (see the envelope check)',
      )
      continue
    }
    report.add(
      `self.output_valid:${command.path}`,
      'self',
      out.code === 0 && validate(doc.data),
      out.code === 0 ? JSON.stringify(validate.errors ?? 'valid').slice(0, 300) : `exit ${out.code}`,
    )
  }
  const rr = ref.release_readiness
  const statuses = ['verified', 'missing', 'not_applicable', 'unknown']
  const rrOk =
    ['stable', 'beta', 'unpublishable'].includes(rr.level) &&
    [rr.fcc_status, rr.mock_upstream_status, rr.live_smoke_status].every((s) => statuses.includes(s))
  report.add('self.release_readiness', 'self', rrOk, `level ${rr.level}`)
  if (ref.commands.some((c) => c.path === 'doctor')) {
    const doctor = json(await call(t, 'doctor', ['doctor']))?.data as
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

  await writeGate(t, ref, report)

  // Whole-run invariants.
  for (const c of t.calls.filter((c) => !c.label.startsWith('fuzz'))) {
    if (c.args.includes('--format') && c.args[c.args.indexOf('--format') + 1] !== 'json' && !c.args.includes('yaml'))
      continue
    if (c.args.includes('--help')) continue
    const violations = jsonViolations(c.stdout, c.code, ref, commandFor(ref, c.args))
    const id = `envelope:${c.label}`
    if (report.checks.some((x) => x.id === id)) continue
    report.add(
      id,
      'envelope',
      violations.length === 0,
      violations.length ? violations.join('; ').slice(0, 400) : `${c.args.join(' ')}`,
    )
  }
  const mismatched = t.calls
    .map((c) => ({ c, e: errorOf(c) }))
    .filter(
      ({ c, e }) =>
        e?.code && (ref.error_codes[e.code]?.exit !== c.code || ref.error_codes[e.code]?.retryable !== e.retryable),
    )
  report.add(
    'exit.catalogue',
    'exit',
    mismatched.length === 0,
    mismatched.length
      ? mismatched.map(({ c, e }) => `${c.args.join(' ')}: ${e?.code} exit ${c.code}`).join('; ')
      : `${t.calls.filter((c) => errorOf(c)).length} errors, each with its table's exit and retryable`,
  )
  const extensionProblems = Object.entries(ref.error_codes)
    .filter(([code]) => !(code in CORE_ERRORS))
    .filter(([, e]) => ![1, 3, 4, 5, 6, 7, 8].includes(e.exit) || e.retryable !== [7, 8].includes(e.exit))
    .map(([code]) => code)
  const coreProblems = Object.entries(CORE_ERRORS)
    .filter(([code, e]) => ref.error_codes[code]?.exit !== e.exit || ref.error_codes[code]?.retryable !== e.retryable)
    .map(([code]) => code)
  report.add(
    'exit.extension_rules',
    'exit',
    extensionProblems.length === 0 && coreProblems.length === 0,
    [...extensionProblems, ...coreProblems].join(', ') || 'core codes unchanged; extensions within their rules',
  )
  const slow = t.calls.filter((c) => c.timedOut)
  report.add(
    'interactive.timeouts',
    'interactive',
    slow.length === 0,
    slow.length
      ? slow.map((c) => c.args.join(' ')).join('; ')
      : `${t.calls.length} calls, none over ${t.timeoutMs} ms with stdin closed`,
  )
  return ref
}

/** The argv of a write command's `--dry-run` example, without the tool name and the flag itself. */
export function dryRunArgv(command: RefCommand, tool: string): string[] | undefined {
  const example = command.examples.find((e) => e.includes('--dry-run'))
  if (!example) return undefined
  const parsed = shellParse(example).filter((w): w is string => typeof w === 'string')
  const argv = (parsed[0] === tool ? parsed.slice(1) : parsed).filter((w) => w !== '--dry-run')
  return argv.some((w) => /^<.*>$/.test(w)) ? undefined : argv
}

async function readState(t: Target, ref: Ref): Promise<string> {
  const reads = ref.commands.filter(
    (c) => plainRead(c) && !['reference', 'context', 'doctor', 'changelog'].includes(c.path),
  )
  const outs = await Promise.all(reads.map((c) => call(t, `state:${c.path}`, words(c.path))))
  // Only successful reads describe state; a refusal (a login that needs a person) may differ on every call.
  return outs.map((o) => (o.code === 0 ? strip(json(o)) : `exit ${o.code}`)).join('\n')
}

/** No write without a token: exit 5 and nothing visible changed; a dry-run token; a tampered token refused. */
async function writeGate(t: Target, ref: Ref, report: Report): Promise<void> {
  for (const command of ref.commands.filter((c) => c.type === 'write')) {
    const argv = dryRunArgv(command, ref.tool)
    if (!argv) {
      report.add(`write.no_token:${command.path}`, 'write', false, 'no runnable example with --dry-run')
      continue
    }
    const before = await readState(t, ref)
    const refused = await call(t, `write:${command.path}`, argv)
    const after = await readState(t, ref)
    if (NEEDS_STATE.has(refused.code ?? -1)) {
      report.add(
        `write.no_token:${command.path}`,
        'write',
        'skip',
        `its example needs state a fresh home lacks (exit ${refused.code}, ${errorOf(refused)?.code})`,
      )
      continue
    }
    report.add(
      `write.no_token:${command.path}`,
      'write',
      refused.code === 5 && errorOf(refused)?.code === 'E_CONFIRMATION_REQUIRED' && before === after,
      `exit ${refused.code}; read state ${before === after ? 'unchanged' : 'CHANGED'}`,
    )
    const dry = await call(t, `write:${command.path} --dry-run`, [...argv, '--dry-run'])
    const data = json(dry)?.data as { confirm_token?: string; expires_at?: string } | undefined
    const expires = Date.parse(data?.expires_at ?? '')
    const dryOk =
      dry.code === 0 &&
      /^ct_/.test(data?.confirm_token ?? '') &&
      /Z$/.test(data?.expires_at ?? '') &&
      expires > Date.now()
    report.add(
      `write.dry_run:${command.path}`,
      'write',
      dryOk,
      `token ${data?.confirm_token?.slice(0, 8) ?? 'none'}…, expires_at ${data?.expires_at ?? 'none'}`,
    )
    if (!data?.confirm_token) continue
    const token = data.confirm_token
    const at = Math.floor(token.length / 2)
    const tampered = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1)
    const refusedTamper = await call(t, `write:${command.path} --confirm tampered`, [...argv, '--confirm', tampered])
    report.add(
      `write.tampered:${command.path}`,
      'write',
      refusedTamper.code === 6,
      `tampered token → exit ${refusedTamper.code}`,
    )
  }
}
