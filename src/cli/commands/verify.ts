import { writeFileSync } from 'node:fs'
import * as Args from '@oclif/core/args'
import { AgentCommand } from '../../command.js'
import { AgentError } from '../../errors/agent-error.js'
import { Flags } from '../../flags.js'
import { output } from '../../schema/output.js'
import { missingTarget, target } from '../../verify/call.js'
import { runChecks } from '../../verify/checks.js'
import { junit, sarif } from '../../verify/ci-report.js'
import { fuzz } from '../../verify/fuzz.js'
import type { Ref } from '../../verify/reference-types.js'
import { Report } from '../../verify/report.js'
import { sandboxEnv, sandboxSettings } from '../../verify/settings.js'

/** A CI report the caller asked for; a path that cannot be written is E_IO, not a crash. */
function save(path: string, body: string): void {
  try {
    writeFileSync(path, body)
  } catch (error) {
    throw new AgentError('E_IO', `cannot write ${path}: ${(error as Error).message}`, { details: { path } })
  }
}

/** `agentcli verify`: Check any CLI against the agent contract, as a black box. */
export default class Verify extends AgentCommand {
  static override summary = 'Check any CLI against the agent contract, as a black box'
  static override description =
    'Runs the target with stdin closed, no TTY, a fresh HOME and config dirs, no network and a timeout per call; discovers it through its `reference`; populates it through its own writes (and --setup lines), then checks envelopes, exit codes, universal flags, stdio, self-description on real output, read purity, bounded lists, the write gate and non-interactivity; a target without `reference` still gets every check that does not need one. Exit 0 only when no check fails; otherwise E_CONFORMANCE with the report. --fuzz N adds N seeded random invocations.'
  static override examples = [
    '<%= config.bin %> verify -- node examples/tasks/bin/run.js',
    '<%= config.bin %> verify --fuzz 2000 --seed 7 -- tasks',
    '<%= config.bin %> verify --mcp -- tasks',
    `<%= config.bin %> verify --setup 'create --title a --confirm <confirm_token>' --junit verify.xml -- tasks`,
    '<%= config.bin %> verify --allow-upstream http://127.0.0.1:4010 --env WEATHER_API_URL=http://127.0.0.1:4010 --env WEATHER_TOKEN=test -- weather',
  ]
  static override strict = false
  // Declared, so `reference` says what a bare `verify` lacks (it is E_USAGE): the words after `--`, a program and
  // its arguments.
  static override args = {
    command: Args.string({
      required: true,
      multiple: true,
      description: 'After --: the command that starts the CLI to verify (a program on PATH, or node path/to/bin.js).',
    }),
  }
  static override flags = {
    fuzz: Flags.integer({
      min: 0,
      max: 100_000,
      default: 0,
      description: 'Random invocations to run after the checks.',
    }),
    seed: Flags.integer({ min: 0, description: 'Seed of the fuzzer (printed on failure, for reproduction).' }),
    mcp: Flags.boolean({
      description:
        'Check the MCP surface (`<command> mcp`) against reference instead: one tool per command, schemas, annotations, codes, the write gate.',
    }),
    conformance: Flags.boolean({
      dependsOn: ['mcp'],
      description:
        'With --mcp: also run the official MCP conformance suite (server mode, both spec revisions, tasks scenarios) against `<command> mcp --http`, one check per scenario; the suite comes from this project’s devDependencies.',
    }),
    'timeout-ms': Flags.integer({ min: 100, max: 600_000, default: 15_000, description: 'Time limit of each call.' }),
    setup: Flags.string({
      multiple: true,
      description:
        'An invocation of the target (its words, as in an example) run before the checks to create state; repeatable. `--confirm <confirm_token>` in it means: dry-run it first and confirm with that token.',
    }),
    junit: Flags.string({ description: 'Also write the report as JUnit XML to this file (CI test reports).' }),
    sarif: Flags.string({ description: 'Also write the failures as SARIF 2.1.0 to this file (code scanning).' }),
    env: Flags.string({
      multiple: true,
      description:
        'A setting of the target, NAME=value (its API URL, a test credential); repeatable. The sandbox’s own variables (HOME, XDG_*, PATH, the proxy) cannot be replaced.',
    }),
    'allow-upstream': Flags.string({
      multiple: true,
      description:
        'A loopback upstream the target may reach, http://127.0.0.1:<port> (a mock the author started); repeatable. Every other request still goes nowhere.',
    }),
    release: Flags.boolean({
      description:
        'Gate a release: also fail when the tool’s release readiness is unpublishable (a declared `unpublishable`, FCC not verified, mock upstream missing).',
    }),
  }
  static override errorCodes = ['E_CONFIG', 'E_CONFORMANCE', 'E_IO', 'E_NOT_FOUND'] as const
  static override output = output((z) =>
    z.object({
      target: z.string(),
      tool: z.string().nullable(),
      version: z.string().nullable(),
      release_level: z.enum(['stable', 'beta', 'unpublishable']).nullable(),
      checks: z.array(
        z.object({ id: z.string(), group: z.string(), status: z.enum(['pass', 'fail', 'skip']), evidence: z.string() }),
      ),
      summary: z.object({
        pass: z.number().int(),
        fail: z.number().int(),
        skip: z.number().int(),
        total: z.number().int(),
      }),
      fuzz: z
        .object({
          runs: z.number().int(),
          seed: z.number().int(),
          failures: z.array(
            z.object({
              index: z.number().int(),
              args: z.array(z.string()),
              env: z.record(z.string(), z.string()),
              violations: z.array(z.string()),
            }),
          ),
        })
        .nullable(),
    }),
  )

  async execute() {
    const { argv, flags } = await this.parse(Verify)
    const command = (argv as string[]).filter((a) => a !== '--')
    if (command.length === 0)
      throw new AgentError('E_USAGE', 'name the CLI to verify after --', {
        details: { hint: 'agentcli verify -- node path/to/bin.js' },
      })
    // A target that cannot start is named as such, not reported as thirty failed checks.
    const missing = missingTarget(command)
    if (missing)
      throw new AgentError('E_NOT_FOUND', `cannot start the CLI to verify: ${missing} does not exist`, {
        details: {
          path: missing,
          fix: 'name it after --: a program on PATH, or node path/to/bin.js relative to the current directory',
        },
      })
    // Resolved before anything runs: a missing suite is the author's setup to fix, not a failed check.
    const suite = flags.conformance
      ? (await import('../../verify/conformance.js')).requireConformanceSuite(process.cwd())
      : undefined
    const settings = sandboxSettings(flags.env, flags['allow-upstream'])
    const t = target(command, flags['timeout-ms'], sandboxEnv(settings))
    const report = new Report()
    try {
      const ref = flags.mcp ? await mcpChecks(t, report) : await runChecks(t, report, { setups: flags.setup ?? [] })
      if (suite) await (await import('../../verify/conformance.js')).runConformanceChecks(t, report, suite)
      let fuzzed = null
      if (!ref && flags.fuzz > 0)
        report.add(
          'fuzz.invariants',
          'fuzz',
          'skip',
          `--fuzz ${flags.fuzz} not run: the fuzzer draws its invocations from the target's reference, which it does not have`,
        )
      if (ref && flags.fuzz > 0) {
        const seed = flags.seed ?? Math.floor(Math.random() * 2 ** 31)
        fuzzed = await fuzz(t, ref, flags.fuzz, seed)
        const shown = fuzzed.failures
          .slice(0, 5)
          .map(
            (f) =>
              `#${f.index} ${JSON.stringify(f.args)}${Object.keys(f.env).length ? ` env ${JSON.stringify(f.env)}` : ''}: ${f.violations.join('; ')}`,
          )
        report.add(
          'fuzz.invariants',
          'fuzz',
          fuzzed.failures.length === 0,
          fuzzed.failures.length
            ? `seed ${seed}: ${fuzzed.failures.length}/${flags.fuzz} broke an invariant; ${shown.join(' | ')}`
            : `seed ${seed}: ${flags.fuzz} invocations kept every invariant`,
        )
      }
      const level = ref?.release_readiness.level
      if (flags.release) releaseGate(report, ref?.release_readiness)
      const data = {
        target: command.join(' '),
        tool: ref?.tool ?? null,
        version: ref?.version ?? null,
        release_level: level === 'stable' || level === 'beta' || level === 'unpublishable' ? level : null,
        checks: report.checks,
        summary: report.summary(),
        fuzz: fuzzed,
      }
      if (flags.junit) save(flags.junit, junit(data))
      if (flags.sarif) save(flags.sarif, sarif(data, this.config.version))
      if (data.summary.fail > 0) {
        if (this.globals.format === 'text')
          for (const c of report.checks.filter((x) => x.status === 'fail')) this.log(`FAIL ${c.id}: ${c.evidence}`)
        throw new AgentError(
          'E_CONFORMANCE',
          `${data.summary.fail} of ${data.summary.total} conformance checks failed: ${report.checks
            .filter((c) => c.status === 'fail')
            .map((c) => c.id)
            .join(', ')}`,
          { details: data },
        )
      }
      return data
    } finally {
      t.dispose()
    }
  }
}

/** `--mcp`: read `reference`, then check the MCP server against it (loaded only then). */
async function mcpChecks(t: ReturnType<typeof target>, report: Report): Promise<Ref | undefined> {
  const { call, json } = await import('../../verify/call.js')
  const ref = json(await call(t, 'reference', ['reference']))?.data as Ref | undefined
  report.add(
    'mcp.reference',
    'mcp',
    Boolean(ref?.commands),
    ref?.commands ? `${ref.commands.length} commands` : 'no reference to check against',
  )
  if (!ref?.commands) return undefined
  const { runMcpChecks } = await import('../../verify/mcp-checks.js')
  await runMcpChecks(t, report, ref)
  return ref
}

/** `--release`: a tool whose readiness is unpublishable (or that describes none) fails the gate, with the reason. */
function releaseGate(report: Report, readiness: { level: string; reason?: string } | undefined): void {
  if (!readiness) {
    report.add('release.readiness', 'release', false, 'no reference: release readiness unknown')
    return
  }
  const releasable = readiness.level === 'stable' || readiness.level === 'beta'
  report.add(
    'release.readiness',
    'release',
    releasable,
    `level ${readiness.level}${readiness.reason ? `: ${readiness.reason}` : ''}`,
  )
}
