import { spawnSync } from 'node:child_process'
import { cpSync } from 'node:fs'
import { join, sep } from 'node:path'
import { HttpResponse, http } from 'msw'
import { expect } from 'vitest'
import { ROOT } from './helpers.js'
import { oncePerRun } from './once-per-run.js'
import { startUpstream, type Upstream } from './upstream.js'

/**
 * A copy of test/fixtures/upstream-tool, built (its changelog embedded, as in any tool), once per test run and shared
 * read-only by the files that verify it (verify-upstream.test.ts, verify-node22.test.ts): one `agentcli-build` where
 * each file ran its own, and none in the fixture itself, whose bundle another worker's calls could be reading.
 * Resolves to the copy's directory.
 */
export function builtUptool(): Promise<string> {
  return oncePerRun('upstream-tool', (stage) => {
    const tool = join(stage, 'upstream-tool')
    cpSync(join(ROOT, 'test/fixtures/upstream-tool'), tool, {
      recursive: true,
      filter: (path) => !path.includes(`${sep}dist`),
    })
    const build = spawnSync(process.execPath, [join(ROOT, 'bin/agentcli-build.js'), tool], { encoding: 'utf8' })
    if (build.status !== 0)
      throw new Error(`agentcli-build of the upstream tool failed (${build.status}): ${build.stderr}`)
    return tool
  })
}

/** The bearer token the mock API of test/fixtures/upstream-tool accepts. */
export const UPTOOL_TOKEN = 't0ken'

/**
 * The API test/fixtures/upstream-tool talks to, on a loopback port: GET /items answers two items to the bearer
 * {@link UPTOOL_TOKEN}, 401 to anything else.
 */
export function startUptoolApi(): Promise<Upstream> {
  return startUpstream([
    http.get('*/items', ({ request }) =>
      request.headers.get('authorization') === `Bearer ${UPTOOL_TOKEN}`
        ? HttpResponse.json({
            items: [
              { id: 1, title: 'one' },
              { id: 2, title: 'two' },
            ],
          })
        : HttpResponse.json({ message: 'bad token' }, { status: 401 }),
    ),
  ])
}

/** verify's flags that let the upstream tool reach the mock at `url`: the allowed upstream and both settings. */
export const uptoolFlags = (url: string): string[] => [
  '--allow-upstream',
  url,
  '--env',
  `UPTOOL_API_URL=${url}`,
  '--env',
  `UPTOOL_TOKEN=${UPTOOL_TOKEN}`,
]

/**
 * The fuzz of {@link uptoolCiFlags}: every command reached, in as few calls as a seed gives. Seed 33 is, of seeds 1
 * to 300, the one whose invocations draw every command of the upstream tool soonest (9 calls; seed 1 takes 23);
 * test/cli/verify/verify-upstream.test.ts holds that. A scaffold's CI runs 500.
 */
export const UPTOOL_FUZZ = { runs: 9, seed: 33 }

/** verify's flags for the upstream tool as the scaffold's CI runs it, the fuzz cut down to keep the run short. */
export const uptoolCiFlags = (url: string): string[] => [
  ...uptoolFlags(url),
  '--fuzz',
  String(UPTOOL_FUZZ.runs),
  '--seed',
  String(UPTOOL_FUZZ.seed),
]

type Report = { ok: boolean; data?: { checks: Array<{ id: string; status: string }>; summary: { fail: number } } }

/**
 * What a run of verify with {@link uptoolCiFlags} must show: green (no check failed), quiet stderr, the fuzz kept
 * every invariant, and both upstream commands checked on the mock's answer (not skipped), the token sent to it.
 */
export function expectGreenOnMock(json: unknown, upstream: Upstream): void {
  const report = json as Report
  const check = (id: string) => report.data?.checks.find((c) => c.id === id)
  expect(report.ok).toBe(true)
  expect(report.data?.summary.fail).toBe(0)
  expect(check('stdio.quiet_stderr')).toMatchObject({ status: 'pass' })
  expect(check('fuzz.invariants')).toMatchObject({ status: 'pass' })
  expect(check('self.output_valid:items')).toMatchObject({ status: 'pass' })
  expect(check('self.output_valid:feed')).toMatchObject({
    status: 'pass',
    evidence: expect.stringContaining('2 item(s)'),
  })
  expect(upstream.requests.map((r) => r.headers.get('authorization'))).toContain(`Bearer ${UPTOOL_TOKEN}`)
}
