import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { getNode22 } from '../../support/node22.js'
import { spawnRun } from '../../support/spawn-run.js'
import type { Upstream } from '../../support/upstream.js'
import { builtUptool, expectGreenOnMock, startUptoolApi, uptoolCiFlags } from '../../support/upstream-tool.js'

// Node 22 is allowed by engines, and the scaffold's CI runs `agentcli verify` on it (its matrix of 22 and 24): verify
// itself and the tool it checks both on Node 22, as there. On Node 22 the proxy agent verify's sandbox once turned on
// to cut the network was experimental, and Node said so on stderr at every start: the `--quiet` check counted Node's
// words as the tool's. The cut is now a preload (net-cut.cjs); this keeps a Node 22 run green and quiet, for a tool
// with an upstream driven against a loopback mock (its Node 24 twin: verify-upstream.test.ts). The Node 22 is npm's
// `node` package, a few seconds from npm's cache; when it cannot be had, the file fails.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
// The upstream tool built once per run, in a copy shared with verify-upstream.test.ts (never the fixture itself: a
// build rewrites the bundle another worker's calls may be reading).
let TOOL = ''
const NET_CUT = join(ROOT, 'dist/verify/net-cut.cjs')
let node22 = ''
let upstream: Upstream

beforeAll(async () => {
  ;[node22, TOOL] = await Promise.all([getNode22(), builtUptool()])
  upstream = await startUptoolApi()
}, 240_000)
afterAll(async () => {
  await upstream?.close()
})

describe('agentcli verify on Node 22', () => {
  it("the sandbox's network cut puts nothing on Node 22's stderr, and a request is refused", () => {
    // No proxy agent is loaded, so Node has no experimental feature to warn about.
    const bare = spawnSync(
      node22,
      ['-e', "fetch('http://agentcli-verify.invalid/').catch((e) => process.stdout.write(e.cause.code))"],
      { encoding: 'utf8', env: { PATH: process.env.PATH, NODE_OPTIONS: `--require=${NET_CUT}` } },
    )
    expect(bare.stderr).toBe('')
    expect(bare.stdout).toBe('ECONNREFUSED')
  })

  it('verify on Node 22, as the CI matrix runs it, against a tool with an upstream on a loopback mock: green, quiet, fuzzed', async () => {
    upstream.reset()
    // `node` is Node 22 on PATH, as on the matrix's Node 22 leg: verify and the target (`node bin/run.js`) both run
    // on it.
    const PATH = `${dirname(node22)}:${process.env.PATH}`
    expect(spawnSync('node', ['--version'], { encoding: 'utf8', env: { PATH } }).stdout).toMatch(/^v22\./)
    const run = await spawnRun(
      node22,
      [AGENTCLI, 'verify', ...uptoolCiFlags(upstream.url), '--', 'node', 'bin/run.js'],
      {
        env: { PATH },
        cwd: TOOL,
        timeoutMs: 150_000,
      },
    )
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expectGreenOnMock(run.json, upstream)
    // verify ran on Node 22 and nothing of Node's own reached its stderr either.
    expect(run.stderr).toBe('')
  }, 180_000)
})
