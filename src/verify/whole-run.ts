import { CORE_ERRORS } from '../errors/catalogue.js'
import { errorOf } from './_private.js'
import type { Call, Target } from './call.js'
import { decorationCheck } from './decoration.js'
import { stdioChecks } from './generic.js'
import { commandFor, jsonViolations } from './invariants.js'
import type { Ref } from './reference-types.js'
import type { Report } from './report.js'

/** The labels of verify's own state probes, which repeat the checks' calls. */
const PROBE = /^(populate:read |state:|lists:|empty:)/

/**
 * What every call of the run must have kept: the envelope, the error table's exits, the time limit, stdio rules,
 * prose without decoration (fuzz calls aside: a fuzzed argument echoed back is the caller's, not decoration).
 * `ref` is the target's own (or, for a target without one, the core table: `hasRef` false skips the extension rule).
 */
export function wholeRun(t: Target, ref: Ref, report: Report, hasRef: boolean): void {
  // One envelope check per distinct argv: verify's own state probes (populating, comparing, paging) repeat the
  // calls the checks make, and one defect is reported once, under the check's label, from whichever call showed it.
  const byArgv = new Map<string, Call[]>()
  for (const c of t.calls.filter((c) => !c.label.startsWith('fuzz'))) {
    if (c.args.includes('--format') && c.args[c.args.indexOf('--format') + 1] !== 'json' && !c.args.includes('yaml'))
      continue
    if (c.args.includes('--help')) continue
    const key = c.args.join('\u0000')
    byArgv.set(key, [...(byArgv.get(key) ?? []), c])
  }
  for (const calls of byArgv.values()) {
    const label = (calls.find((c) => !PROBE.test(c.label)) ?? calls[0]!).label
    const id = `envelope:${label}`
    if (report.checks.some((x) => x.id === id)) continue
    const violations =
      calls.map((c) => jsonViolations(c.stdout, c.code, ref, commandFor(ref, c.args))).find((v) => v.length) ?? []
    report.add(
      id,
      'envelope',
      violations.length === 0,
      violations.length ? violations.join('; ').slice(0, 400) : `${calls[0]!.args.join(' ')}`,
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
  if (hasRef) {
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
  }
  const slow = t.calls.filter((c) => c.timedOut)
  report.add(
    'interactive.timeouts',
    'interactive',
    slow.length === 0,
    slow.length
      ? slow.map((c) => c.args.join(' ')).join('; ')
      : `${t.calls.length} calls, none over ${t.timeoutMs} ms with stdin closed`,
  )
  stdioChecks(t.calls, report)
  decorationCheck(
    t.calls.filter((c) => !c.label.startsWith('fuzz')),
    report,
  )
}
