import { errorOf, needsInput, plainRead, strip, words } from './_private.js'
import { type Call, call, json, type Target } from './call.js'
import { colourTemptation, coreRef, notApplicable, quietStderr } from './generic.js'
import { boundedLists } from './lists.js'
import { localChecks } from './local-checks.js'
import { policyGate } from './policy-gate.js'
import { populate } from './populate.js'
import { REFERENCE_KEYS, type Ref, type RefCommand } from './reference-types.js'
import type { Report } from './report.js'
import { baselines, readinessChecks, selfChecks, type Validator, validator } from './self-checks.js'
import { wholeRun } from './whole-run.js'
import { writeGate } from './write-gate.js'

function expectError(report: Report, id: string, c: Call, codes: string[], exit: number): void {
  const got = errorOf(c)?.code
  report.add(
    id,
    'exit',
    c.code === exit && got !== undefined && codes.includes(got),
    `${c.args.join(' ')} → exit ${c.code}, code ${got ?? 'none'} (want ${codes.join('|')}, exit ${exit})`,
  )
}

/** What verify is asked to do beyond its fixed checks. */
export type CheckOptions = { setups: string[] }

/**
 * Run every check. Those any CLI can be held to (unknown command and flag, `--help`, `--quiet`, stdio, envelopes,
 * the core error table, time limits) run on every target; the rest discover the target through its `reference`
 * and, on a target without one, are reported as not applicable, with the reason.
 */
export async function runChecks(t: Target, report: Report, options: CheckOptions): Promise<Ref | undefined> {
  const refCall = await call(t, 'reference', ['reference'])
  const refDoc = json(refCall)
  const found = refDoc?.data as Ref | undefined
  const missing = REFERENCE_KEYS.filter((k) => !found || !(k in found))
  report.add(
    'self.reference_keys',
    'self',
    refCall.code === 0 && missing.length === 0,
    missing.length ? `reference lacks ${missing.join(', ')}` : 'all required keys present',
  )
  const ref = found && missing.length === 0 ? found : undefined
  // The schema validator is an optional peer, needed only with a reference: missing, it is E_CONFIG now, before the
  // target is run for every other check.
  const ajv = ref ? await validator() : undefined

  // What every CLI can be asked, reference or not.
  const probe = ref && (ref.commands.find(plainRead) ?? ref.commands.find((c) => c.path === 'reference'))
  const probeArgv = probe ? words(probe.path) : ['--version']
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
    await call(t, 'unknown flag', [...probeArgv, '--agentcli-verify-bogus']),
    ['E_USAGE'],
    2,
  )
  const help = await call(t, '--help', ['--help'])
  report.add('flags.help', 'flags', help.code === 0, `--help exits ${help.code}`)
  await colourTemptation(t)
  if (ref && ajv) await referenceChecks(t, ref, report, options, refCall, ajv)
  else {
    quietStderr(await call(t, '--version --quiet', ['--version', '--quiet']), report)
    notApplicable(
      report,
      `\`reference\` did not describe the target (exit ${refCall.code}${missing.length ? `; lacks ${missing.join(', ')}` : ''})`,
    )
  }
  wholeRun(t, ref ?? coreRef(), report, ref !== undefined)
  return ref
}

/**
 * The checks that read the target's `reference`: exit codes, universal flags, state, self-description, writes.
 * `refCall` is the run of `reference` that described the target.
 */
async function referenceChecks(
  t: Target,
  ref: Ref,
  report: Report,
  options: CheckOptions,
  refCall: Call,
  ajv: Validator,
): Promise<void> {
  const probe: RefCommand = ref.commands.find(plainRead) ?? ref.commands.find((c) => c.path === 'reference')!

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

  // Universal flags, on a read that answers: the first plain read may need a login (exit 3/4) on the empty state,
  // which says nothing of the flags; `reference` always answers.
  const first = await call(t, probe.path, words(probe.path))
  const reference = ref.commands.find((c) => c.path === 'reference')
  const answered = first.code === 0 || !reference || probe === reference
  const probed = answered ? probe : reference
  const base = answered ? first : await call(t, reference.path, words(reference.path))
  const alias = await call(t, `${probed.path} --json`, [...words(probed.path), '--json'])
  report.add(
    'flags.json_alias',
    'flags',
    strip(json(base)) === strip(json(alias)),
    '--json and --format json give the same document',
  )
  const text = await call(t, `${probed.path} --format text`, [...words(probed.path), '--format', 'text'])
  report.add(
    'flags.text_format',
    'flags',
    text.code === base.code && json(text)?.ok === undefined,
    `text exit ${text.code} (json ${base.code}); envelope on stdout: ${json(text)?.ok !== undefined}`,
  )
  const quiet = await call(t, `${probed.path} --quiet`, [...words(probed.path), '--quiet'])
  report.add('flags.quiet', 'flags', strip(json(quiet)) === strip(json(base)), '--quiet leaves stdout unchanged')
  expectError(
    report,
    'flags.bad_field',
    await call(t, 'bad --fields', [...words(probed.path), '--fields', 'agentcli_verify_no_such_field']),
    ['E_VALIDATION'],
    2,
  )
  const version = json(await call(t, '--version', ['--version']))?.data as { version?: string } | undefined
  const contextCall = ref.commands.some((c) => c.path === 'context') ? await call(t, 'context', ['context']) : undefined
  const context = contextCall
    ? (json(contextCall)?.data as { version?: string; paths?: { config_dir?: unknown } } | undefined)
    : undefined
  report.add(
    'flags.version',
    'flags',
    version?.version === ref.version && (context === undefined || context.version === ref.version),
    `--version ${version?.version}, reference ${ref.version}, context ${context?.version ?? 'n/a'}`,
  )
  quietStderr(quiet, report)

  // What the reads answer on the empty state: a read that fails only once there is data is told from one that
  // needs a login. The reads the checks above made are on that state already (nothing has been confirmed yet), and
  // are not made again.
  const empty = await baselines(t, ref, [refCall, first, base, ...(contextCall ? [contextCall] : [])])
  // State first, so the reads below answer real, non-empty output (and the read rule is tested on it).
  const { seen, owned, reads } = await populate(t, ref, report, options.setups)
  // The reads of the populated state: each made once, and read by every check that asks it.
  const populated = await selfChecks(t, ref, report, seen, empty, reads, ajv)
  await boundedLists(t, ref, report, seen, populated)
  await readinessChecks(t, ref, report, populated)
  await writeGate(t, ref, report, seen)
  // Its own operator policy, put in the sandbox for this check alone and taken away after it.
  await policyGate(t, ref, report, seen, context?.paths?.config_dir)
  // Last: a local command that breaks the rule may take the state the checks above read.
  await localChecks(t, ref, report, seen, owned)
}
