import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const BROKEN = join(ROOT, 'test/fixtures/broken-mcp/tool.mjs')

type Check = { id: string; status: string; evidence: string }
// biome-ignore lint/suspicious/noExplicitAny: the report is read loosely
const checksOf = (json: any): Check[] => json.data?.checks ?? json.error?.details?.checks ?? []

function verifyMcp(target: string[]) {
  return runTool(AGENTCLI, ['verify', '--mcp', '--', process.execPath, ...target], { timeoutMs: 120_000 })
}

describe('agentcli verify --mcp', () => {
  // The example passing these checks is shown on the run test/cli/verify/verify-conformance.test.ts makes over it
  // (`--mcp --conformance`: the same checks, then the suite's), not by a second run of its own.

  // Each case breaks one promise, and the check it breaks must fail with that evidence. The breakages do not touch
  // one another's checks (the tool left out of the listing is one no other case needs), so one server carries all
  // of them: one verify run instead of nine.
  const cases: Array<[string, string, RegExp]> = [
    ['missing-tool', 'mcp.one_tool_per_command', /missing \["whoami"\]/],
    ['schema', 'mcp.schemas_equal', /list\.inputSchema/],
    ['unpointed', 'mcp.schemas_equal', /list\.outputSchema/],
    ['described', 'mcp.schemas_equal', /get\.outputSchema \(describe_tool\)/],
    ['annotations', 'mcp.annotations_match_kinds', /delete \(write\): readOnlyHint=true/],
    ['codes', 'mcp.codes_preserved', /CLI E_NOT_FOUND, MCP E_INTERNAL/],
    ['ungated', 'mcp.writes_gated', /create: called without a token it answered ok/],
    ['crash', 'mcp.bad_argument', /server exited/],
    ['legacy-only', 'mcp.revisions', /did not offer 2026-07-28/],
  ]
  let together: ReturnType<typeof verifyMcp> | undefined
  const runFor = () => {
    together ??= verifyMcp([BROKEN, cases.map(([mode]) => mode).join(',')])
    return together
  }
  for (const [mode, check, evidence] of cases) {
    it(`fails a server that breaks ${check} (${mode})`, async () => {
      const run = await runFor()
      expect(run.code, run.stdout).toBe(1)
      // biome-ignore lint/suspicious/noExplicitAny: envelope
      expect((run.json as any).error.code).toBe('E_CONFORMANCE')
      const failed = checksOf(run.json).find((c) => c.id === check)
      expect(failed?.status, run.stdout).toBe('fail')
      expect(failed?.evidence).toMatch(evidence)
    }, 120_000)
  }
})
