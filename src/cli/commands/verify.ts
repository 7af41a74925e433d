import { writeFileSync } from 'node:fs'
import type { Interfaces } from '@oclif/core'
import * as Args from '@oclif/core/args'
import { AgentCommand } from '../../command.js'
import { AgentError } from '../../errors/agent-error.js'
import { Flags } from '../../flags.js'
import { output } from '../../schema/output.js'
import { missingTarget, target } from '../../verify/call.js'
import { runChecks } from '../../verify/checks.js'
import { junit, sarif } from '../../verify/ci-report.js'
import { CONFORMANCE_REVISIONS } from '../../verify/conformance.js'
import { checkConformanceFlags } from '../../verify/conformance-flags.js'
import { conformanceUrl } from '../../verify/conformance-url.js'
import { fuzz } from '../../verify/fuzz.js'
import type { McpServerInfo } from '../../verify/mcp-http-probe.js'
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

// biome-ignore lint/suspicious/noExplicitAny: oclif's own bound for flag and argument records
type Loose = Record<string, any>

/** Whether the words before `--` ask for a `--url` run (`--url <u>` or `--url=<u>`). */
function urlRun(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--url' || a.startsWith('--url='))
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
    '<%= config.bin %> verify --mcp --conformance --url http://127.0.0.1:3000/mcp --baseline conformance-baseline.json',
    `<%= config.bin %> verify --setup 'create --title a --confirm <confirm_token>' --junit verify.xml -- tasks`,
    '<%= config.bin %> verify --allow-upstream http://127.0.0.1:4010 --env WEATHER_API_URL=http://127.0.0.1:4010 --env WEATHER_TOKEN=test -- weather',
  ]
  static override strict = false
  // Required, so `reference` says what a bare `verify` lacks (it is E_USAGE) and no agent calls it blind: the words
  // after `--`, a program and its arguments. A `--url` run verifies a server, not a CLI: execute() parses it without.
  static override args = {
    command: Args.string({
      required: true,
      multiple: true,
      description:
        'After --: the command that starts the CLI to verify (a program on PATH, or node path/to/bin.js); required unless --url.',
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
        'With --mcp: also run the official MCP conformance suite (server mode, both spec revisions, tasks scenarios) against `<command> mcp --http`, or against --url, one check per scenario; the suite comes from this project’s devDependencies.',
    }),
    url: Flags.string({
      description:
        'With --mcp --conformance and no command: run the suite alone against any Streamable HTTP MCP server at this http(s) URL (no credentials in it; no header is added). No agentcli baseline applies: every failing scenario fails unless --baseline expects it.',
      parse: async (value) => conformanceUrl(value),
    }),
    baseline: Flags.string({
      description:
        'With --conformance: a JSON file of the scenarios the server is expected to fail, per revision: {"2025-11-25": {"<scenario>": "<reason>"}, …}. Replaces agentcli’s own baseline; an entry that passes fails as stale.',
    }),
    revision: Flags.string({
      options: [...CONFORMANCE_REVISIONS],
      description: 'With --conformance: run only this spec revision’s requirement set (default: both).',
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

  // Every parse of a `--url` run (the base's before execute, and execute's) takes the definitions without a command.
  protected override parse<F extends Loose, B extends Loose, A extends Loose>(
    options?: Interfaces.Input<F, B, A>,
    argv: string[] = this.argv,
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const input = (options ?? Verify) === Verify && urlRun(argv) ? WITHOUT_COMMAND : options
    return super.parse(input as Interfaces.Input<F, B, A> | undefined, argv)
  }

  async execute() {
    const { argv, flags } = await this.parse(Verify)
    const command = (argv as string[]).filter((a) => a !== '--')
    checkConformanceFlags(flags, command)
    if (flags.url !== undefined) return this.report(await overUrl(flags.url, flags), flags)
    // A target that cannot start is named as such, not reported as thirty failed checks.
    const missing = missingTarget(command)
    if (missing)
      throw new AgentError('E_NOT_FOUND', `cannot start the CLI to verify: ${missing} does not exist`, {
        details: {
          path: missing,
          fix: 'name it after --: a program on PATH, or node path/to/bin.js relative to the current directory',
        },
      })
    // Resolved before anything runs: a bad baseline file or a missing suite is the author's to fix, not a failed check.
    const conformance = flags.conformance ? await prepareConformance(flags, false) : undefined
    const settings = sandboxSettings(flags.env, flags['allow-upstream'])
    const t = target(command, flags['timeout-ms'], sandboxEnv(settings))
    const report = new Report()
    try {
      const ref = flags.mcp ? await mcpChecks(t, report) : await runChecks(t, report, { setups: flags.setup ?? [] })
      if (conformance) {
        const { runConformanceChecks, startServer } = await import('../../verify/conformance.js')
        await runConformanceChecks(report, conformance.suite, () => startServer(t), conformance.options)
      }
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
      return this.report(
        {
          target: command.join(' '),
          tool: ref?.tool ?? null,
          version: ref?.version ?? null,
          release_level: level === 'stable' || level === 'beta' || level === 'unpublishable' ? level : null,
          checks: report.checks,
          summary: report.summary(),
          fuzz: fuzzed,
        },
        flags,
      )
    } finally {
      t.dispose()
    }
  }

  /** The CI files asked for, then the report: the data, or E_CONFORMANCE carrying it when a check failed. */
  private report(data: VerifyData, flags: { junit?: string | undefined; sarif?: string | undefined }): VerifyData {
    if (flags.junit) save(flags.junit, junit(data))
    if (flags.sarif) save(flags.sarif, sarif(data, this.config.version))
    if (data.summary.fail > 0) {
      const failed = data.checks.filter((c) => c.status === 'fail')
      if (this.globals.format === 'text') for (const c of failed) this.log(`FAIL ${c.id}: ${c.evidence}`)
      throw new AgentError(
        'E_CONFORMANCE',
        `${data.summary.fail} of ${data.summary.total} conformance checks failed: ${failed.map((c) => c.id).join(', ')}`,
        { details: data },
      )
    }
    return data
  }
}

/** What `verify` answers: the report. */
type VerifyData = {
  target: string
  tool: string | null
  version: string | null
  release_level: 'stable' | 'beta' | 'unpublishable' | null
  checks: Report['checks']
  summary: ReturnType<Report['summary']>
  fuzz: Awaited<ReturnType<typeof fuzz>> | null
}

/** The suite and what it runs against, settled before anything runs (the baseline file read, the suite found). */
async function prepareConformance(
  flags: { revision?: string | undefined; baseline?: string | undefined },
  foreign: boolean,
) {
  const { conformanceOptions } = await import('../../verify/conformance-options.js')
  const options = conformanceOptions(flags, foreign)
  const suite = (await import('../../verify/conformance.js')).requireConformanceSuite(process.cwd())
  return { options, suite }
}

/**
 * `--url`: the official suite alone against any MCP server, judged against `--baseline` or nothing. The report's
 * `target` is the URL; `tool` and `version` are the `serverInfo` the server gives in answer to an `initialize`
 * (null when it gives none); the `--mcp` checks are one skip saying why they did not run (they need a reference).
 */
async function overUrl(
  url: string,
  flags: { revision?: string | undefined; baseline?: string | undefined; 'timeout-ms': number },
): Promise<VerifyData> {
  const { options, suite } = await prepareConformance(flags, true)
  const { runConformanceChecks } = await import('../../verify/conformance.js')
  const { probeMcpUrl } = await import('../../verify/mcp-http-probe.js')
  const report = new Report()
  report.add(
    'mcp.reference',
    'mcp',
    'skip',
    'not run with --url: the checks of --mcp compare a server with its CLI’s reference (-- <command>); a URL gets the official suite alone',
  )
  let info: McpServerInfo | undefined
  await runConformanceChecks(
    report,
    suite,
    async () => {
      info = await probeMcpUrl(url, flags['timeout-ms'])
      const who = info.name ? `${info.name}${info.version ? ` ${info.version}` : ''}` : 'no serverInfo'
      const evidence = info.refused
        ? `${url} answers JSON-RPC but refuses initialize (${info.refused}): no serverInfo`
        : `${url} answers initialize (${who})`
      return { url, evidence, stop: async () => undefined }
    },
    options,
  )
  return {
    target: url,
    tool: info?.name ?? null,
    version: info?.version ?? null,
    release_level: null,
    checks: report.checks,
    summary: report.summary(),
    fuzz: null,
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

/** Verify's parse for a `--url` run: the same flags, and no command after `--` asked for. */
const WITHOUT_COMMAND = {
  baseFlags: Verify.baseFlags,
  flags: Verify.flags,
  strict: Verify.strict,
  args: { command: { ...Verify.args.command, required: false } },
}
