import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { CONFORMANCE_SUITE_VERSION } from '../../../src/verify/conformance.js'
import { alive, ROOT, TASKS_BIN, until } from '../../support/helpers.js'

const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const BROKEN = join(ROOT, 'test/fixtures/conformance-broken/tool.mjs')

type Check = { id: string; status: string; evidence: string }
// biome-ignore lint/suspicious/noExplicitAny: the report is read loosely
const checksOf = (json: any): Check[] => json.data?.checks ?? json.error?.details?.checks ?? []
// biome-ignore lint/suspicious/noExplicitAny: the envelope is read loosely
const envelopeOf = (run: { json: unknown }): any => run.json

// The suite comes from the author's devDependencies: here, this repository's (the working directory).
function verify(target: string[], cwd = ROOT, options: string[] = []) {
  return runTool(AGENTCLI, ['verify', '--mcp', '--conformance', ...options, '--', process.execPath, ...target], {
    timeoutMs: 180_000,
    cwd,
  })
}

// One run over the example, read by two tests: its MCP checks (those of `verify --mcp`) and the suite's.
let example: ReturnType<typeof verify> | undefined
const overExample = () => {
  example ??= verify([TASKS_BIN])
  return example
}

describe('agentcli verify --mcp over the example (the checks of a --conformance run)', () => {
  it('passes the example: one tool per command, schemas, annotations, codes, the gate, a bad argument', async () => {
    const run = await overExample()
    expect(run.code, run.stdout).toBe(0)
    // The suite's checks aside, the checks are those of `verify --mcp` (test/cli/verify/verify-mcp.test.ts).
    const checks = checksOf(run.json).filter((c) => !c.id.startsWith('mcp.conformance.'))
    expect(checks.map((c) => c.id)).toEqual([
      'mcp.reference',
      'mcp.starts',
      'mcp.one_tool_per_command',
      'mcp.schemas_equal',
      'mcp.annotations_match_kinds',
      'mcp.codes_preserved',
      'mcp.writes_gated',
      'mcp.bad_argument',
      'mcp.revisions',
    ])
    expect(checks.every((c) => c.status === 'pass')).toBe(true)
    // The example's listing is past 25 kB: its output schemas are checked through describe_tool.
    expect(checks.find((c) => c.id === 'mcp.schemas_equal')?.evidence).toMatch(
      /\d+ output schemas through describe_tool/,
    )
  }, 180_000)
})

describe('agentcli verify --mcp --conformance', () => {
  it('runs the official suite against the example: passes, and the baseline failures skipped with their reason', async () => {
    const run = await overExample()
    expect(run.code, run.stdout).toBe(0)
    const checks = checksOf(run.json).filter((c) => c.id.startsWith('mcp.conformance.'))
    const by = (id: string) => checks.find((c) => c.id === `mcp.conformance.${id}`)
    expect(by('server')?.status).toBe('pass')
    // A command is judged against agentcli's own baseline (a --url against none, or its --baseline file).
    expect(by('baseline')?.evidence).toMatch(
      /^agentcli’s own \(suite .*\): 2025-11-25: \d+ expected failures, 2026-07-28/,
    )
    expect(by('2025-11-25.tools-list')).toMatchObject({ status: 'pass' })
    expect(by('2026-07-28.tools-list')).toMatchObject({ status: 'pass' })
    expect(by('2026-07-28.tasks-lifecycle')).toMatchObject({ status: 'skip', evidence: /expected failure: needs/ })
    expect(by('2025-11-25.prompts-list')).toMatchObject({ status: 'skip', evidence: /expected failure: needs prompts/ })
    expect(checks.filter((c) => c.status === 'fail')).toEqual([])
  }, 180_000)

  it('a scenario failing outside the baseline fails its check, with the suite’s evidence', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-conformance-pid-'))
    const pidFile = join(dir, 'server.pid')
    const run = await verify([BROKEN], ROOT, ['--env', `BROKEN_PID_FILE=${pidFile}`])
    // The server the wrapper started is in the target's process group: verify ends it with the group, even when
    // the wrapper is gone first.
    const server = Number(readFileSync(pidFile, 'utf8'))
    rmSync(dir, { recursive: true, force: true })
    expect(server).toBeGreaterThan(0)
    try {
      await until(() => (alive(server) ? undefined : true), 30_000)
    } finally {
      if (alive(server)) process.kill(server, 'SIGKILL')
    }
    expect(run.code, run.stdout).toBe(1)
    expect(envelopeOf(run).error.code).toBe('E_CONFORMANCE')
    const failed = checksOf(run.json).filter((c) => c.status === 'fail' && c.id.startsWith('mcp.conformance.'))
    expect(failed.map((c) => c.id)).toEqual(
      expect.arrayContaining(['mcp.conformance.2025-11-25.tools-list', 'mcp.conformance.2026-07-28.tools-list']),
    )
    // Its stdio `mcp` ends at once (the example's own surface is the first test's): the `--mcp` checks stop there,
    // and fail nothing else.
    const others = checksOf(run.json).filter((c) => c.status === 'fail' && !c.id.startsWith('mcp.conformance.'))
    expect(others.map((c) => c.id)).toEqual(['mcp.starts', 'mcp.revisions'])
  }, 180_000)

  it('without the suite in the project: E_CONFIG naming the install line, before anything runs', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'agentcli-no-suite-'))
    try {
      const run = await verify([TASKS_BIN], elsewhere)
      expect(run.code, run.stdout).toBe(4)
      expect(envelopeOf(run).error.code).toBe('E_CONFIG')
      expect(envelopeOf(run).error.details.fix).toBe(
        `npm install -D --save-exact @modelcontextprotocol/conformance@${CONFORMANCE_SUITE_VERSION}`,
      )
    } finally {
      rmSync(elsewhere, { recursive: true, force: true })
    }
  })

  it('--conformance needs --mcp', async () => {
    const run = await runTool(AGENTCLI, ['verify', '--conformance', '--', process.execPath, TASKS_BIN], { cwd: ROOT })
    expect(run.code, run.stdout).toBe(2)
    expect(envelopeOf(run).error.code).toBe('E_USAGE')
  })
})
