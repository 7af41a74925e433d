import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { HttpResponse, http } from 'msw'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

// verify on a tool that talks to an API (test/fixtures/upstream-tool: a read and a stream, both calling
// $UPTOOL_API_URL with the bearer $UPTOOL_TOKEN): the author points it at a loopback mock with --allow-upstream and
// passes the settings with --env; without them, the network stays cut and both commands are judged alike. The
// settings refused before anything runs: test/unit/verify/verify-upstream.test.ts.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const TOOL = join(ROOT, 'test/fixtures/upstream-tool')
type Check = { id: string; status: string; evidence: string }
type Report = { ok: boolean; data?: { checks: Check[] }; error?: { code: string; details: Record<string, unknown> } }

let upstream: Upstream
beforeAll(async () => {
  // Its changelog is embedded by the build, as in any tool.
  const build = spawnSync(process.execPath, [join(ROOT, 'bin/agentcli-build.js'), TOOL], { encoding: 'utf8' })
  expect(build.status, build.stderr).toBe(0)
  upstream = await startUpstream([
    http.get('*/items', ({ request }) =>
      request.headers.get('authorization') === 'Bearer t0ken'
        ? HttpResponse.json({
            items: [
              { id: 1, title: 'one' },
              { id: 2, title: 'two' },
            ],
          })
        : HttpResponse.json({ message: 'bad token' }, { status: 401 }),
    ),
  ])
}, 60_000)
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

  it('with --allow-upstream and --env: both commands reach the mock and their output is checked', async () => {
    upstream.reset()
    upstream.requests.length = 0
    const { run, check } = await verify([
      '--allow-upstream',
      upstream.url,
      '--env',
      `UPTOOL_API_URL=${upstream.url}`,
      '--env',
      'UPTOOL_TOKEN=t0ken',
    ])
    expect(run.code, run.stdout).toBe(0)
    expect(check('self.output_valid:items')).toMatchObject({ status: 'pass' })
    expect(check('self.output_valid:feed')).toMatchObject({
      status: 'pass',
      evidence: expect.stringContaining('2 item(s)'),
    })
    expect(upstream.requests.map((r) => r.headers.get('authorization'))).toContain('Bearer t0ken')
  }, 150_000)

  it('--env alone does not open the network: the mock is not reached without --allow-upstream', async () => {
    upstream.requests.length = 0
    const { run, check } = await verify(['--env', `UPTOOL_API_URL=${upstream.url}`, '--env', 'UPTOOL_TOKEN=t0ken'])
    expect(run.code, run.stdout).toBe(0)
    expect(check('self.output_valid:items')).toMatchObject({
      status: 'skip',
      evidence: expect.stringContaining('E_NETWORK'),
    })
    expect(upstream.requests).toEqual([])
  }, 150_000)
})
