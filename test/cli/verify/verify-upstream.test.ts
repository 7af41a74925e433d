import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Ref } from '../../../src/verify/reference-types.js'
import { undrawnCommands } from '../../support/fuzz-cover.js'
import { ROOT } from '../../support/helpers.js'
import type { Upstream } from '../../support/upstream.js'
import {
  builtUptool,
  expectGreenOnMock,
  startUptoolApi,
  UPTOOL_FUZZ,
  uptoolCiFlags,
  uptoolFlags,
} from '../../support/upstream-tool.js'

// verify on a tool that talks to an API (test/fixtures/upstream-tool: a read and a stream, both calling
// $UPTOOL_API_URL with the bearer $UPTOOL_TOKEN): the author points it at a loopback mock with --allow-upstream and
// passes the settings with --env; without them, the network stays cut and both commands are judged alike. The
// settings refused before anything runs: test/unit/verify/verify-upstream.test.ts. The same run on Node 22 (verify
// and the tool both on it, as in the scaffold's CI matrix): verify-node22.test.ts.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
// The fixture test/fixtures/upstream-tool, built once per run in a copy this file shares with verify-node22.test.ts.
let TOOL = ''
type Check = { id: string; status: string; evidence: string }
type Report = {
  ok: boolean
  data?: { checks: Check[] }
  error?: { code: string; details: Record<string, unknown> }
}

let upstream: Upstream
beforeAll(async () => {
  TOOL = await builtUptool()
  upstream = await startUptoolApi()
}, 240_000)
afterAll(() => upstream?.close())

const verify = async (flags: string[]) => {
  const run = await runTool(AGENTCLI, ['verify', ...flags, '--', process.execPath, join(TOOL, 'bin/run.js')], {
    timeoutMs: 120_000,
  })
  const report = run.json as Report
  const checks = report.data?.checks ?? (report.error?.details.checks as Check[] | undefined) ?? []
  return { run, report, checks, check: (id: string) => checks.find((c) => c.id === id) }
}

describe('agentcli verify on a tool with an upstream', () => {
  it('without settings: the read and the stream stopping with E_AUTH are both skipped, the same way; green', async () => {
    const { run, check } = await verify([])
    expect(run.code, run.stdout).toBe(0)
    for (const id of ['self.output_valid:items', 'self.output_valid:feed'])
      expect(check(id), id).toMatchObject({ status: 'skip', evidence: expect.stringMatching(/exit 4, E_AUTH/) })
  }, 150_000)

  it('with --allow-upstream and --env: both commands reach the mock and their output is checked, fuzzed too', async () => {
    upstream.reset()
    const { run, report } = await verify(uptoolCiFlags(upstream.url))
    expect(run.code, run.stdout).toBe(0)
    expectGreenOnMock(report, upstream)
    // The cut-down fuzz still draws every command (here and in verify-node22.test.ts, the same flags).
    const reference = await runTool(join(TOOL, 'bin/run.js'), ['reference'])
    expect(undrawnCommands((reference.json as { data: Ref }).data, UPTOOL_FUZZ.runs, UPTOOL_FUZZ.seed)).toEqual([])
  }, 150_000)

  it('--env alone does not open the network: the mock is not reached without --allow-upstream', async () => {
    upstream.requests.length = 0
    const { run, check } = await verify(uptoolFlags(upstream.url).slice(2))
    expect(run.code, run.stdout).toBe(0)
    expect(check('self.output_valid:items')).toMatchObject({
      status: 'skip',
      evidence: expect.stringContaining('E_NETWORK'),
    })
    expect(upstream.requests).toEqual([])
  }, 150_000)
})
