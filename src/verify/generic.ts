import { CORE_ERRORS } from '../errors/catalogue.js'
import { type Call, call, type Target } from './call.js'
import type { Ref } from './reference-types.js'
import type { Report } from './report.js'

/** A stand-in `reference` for a target that has none: no commands, the core error table. */
export function coreRef(): Ref {
  return {
    tool: '',
    version: '',
    schema_version: '',
    release_readiness: { level: '', fcc_status: '', mock_upstream_status: '', live_smoke_status: '' },
    commands: [],
    error_codes: Object.fromEntries(
      Object.entries(CORE_ERRORS).map(([k, v]) => [k, { exit: v.exit, retryable: v.retryable }]),
    ),
    global_flags: [],
  }
}

/** The checks that need the target's `reference`: on a target without one, each is listed as not applicable. */
export const NEEDS_REFERENCE = [
  'exit.missing_argument',
  'exit.bad_enum',
  'exit.bad_format',
  'exit.raw_on_non_raw',
  'exit.extension_rules',
  'flags.json_alias',
  'flags.text_format',
  'flags.quiet',
  'flags.bad_field',
  'flags.version',
  'self.output_schema',
  'self.examples',
  'self.output_valid',
  'self.read_no_side_effects',
  'self.release_readiness',
  'self.doctor_readiness',
  'self.changelog_since_current',
  'populate.state',
  'lists.bounded',
  'write.no_token',
  'write.dry_run',
  'write.dry_run_no_side_effects',
  'write.tampered',
  'local.keeps_write_state',
] as const

// CSI and OSC sequences, the two an off-terminal colour or hyperlink leaks as.
const ANSI = /\u001b\[|\u001b\]/

/**
 * What a colour-prone environment would tempt a careless target into (a terminal type that has colour, no
 * `NO_COLOR`): `--help` and an unknown command are run in it, still off a TTY, so any escape is a defect.
 */
export async function colourTemptation(t: Target): Promise<void> {
  const tempt = { NO_COLOR: undefined, TERM: 'xterm-256color', COLORTERM: 'truecolor' }
  await call(t, 'colour --help', ['--help'], tempt)
  await call(t, 'colour unknown command', ['agentcli-verify-no-such-command'], tempt)
}

/** Stdio rules every call keeps, whatever the target is built on: UTF-8 without BOM, no ANSI off a TTY. */
export function stdioChecks(calls: Call[], report: Report): void {
  const notUtf8 = calls.filter(
    (c) => c.badUtf8?.length || c.stdout.charCodeAt(0) === 0xfeff || c.stderr.charCodeAt(0) === 0xfeff,
  )
  report.add(
    'stdio.utf8',
    'stdio',
    notUtf8.length === 0,
    notUtf8.length
      ? notUtf8
          .slice(0, 5)
          .map((c) => `${c.args.join(' ')}: ${c.badUtf8?.join('+') ?? 'BOM'}`)
          .join('; ')
      : `${calls.length} calls, stdout and stderr UTF-8 without BOM`,
  )
  const coloured = calls.filter((c) => ANSI.test(c.stdout) || ANSI.test(c.stderr))
  report.add(
    'stdio.no_ansi',
    'stdio',
    coloured.length === 0,
    coloured.length
      ? `ANSI escapes off a TTY: ${coloured
          .slice(0, 5)
          .map((c) => `${c.label} (${ANSI.test(c.stdout) ? 'stdout' : 'stderr'})`)
          .join('; ')}`
      : `${calls.length} calls, none with an ANSI escape (also with TERM=xterm-256color and no NO_COLOR)`,
  )
}

/** `--quiet` silences progress and notes: a successful quiet call leaves stderr empty. */
export function quietStderr(quiet: Call, report: Report): void {
  report.add(
    'stdio.quiet_stderr',
    'stdio',
    quiet.code === 0 && quiet.stderr.trim() === '',
    quiet.code !== 0
      ? `${quiet.args.join(' ')} → exit ${quiet.code}`
      : quiet.stderr.trim()
        ? `${quiet.args.join(' ')} wrote to stderr: ${JSON.stringify(quiet.stderr.slice(0, 120))}`
        : `${quiet.args.join(' ')}: stderr empty`,
  )
}

/** Say which checks could not run on a target without `reference`, and why. */
export function notApplicable(report: Report, why: string): void {
  for (const id of NEEDS_REFERENCE)
    report.add(id, id.split('.')[0] as Parameters<Report['add']>[1], 'skip', `not applicable: ${why}`)
}
