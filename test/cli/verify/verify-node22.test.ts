import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

// On Node 22 (allowed by engines) the proxy agent verify's sandbox turns on to cut the network is experimental, and
// Node says so on stderr at every start: the `--quiet` check counted Node's words as the tool's. A Node 22 from npm
// (the `node` package, a few seconds from npm's cache) runs the target here.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const TOOL = join(ROOT, 'test/fixtures/upstream-tool')
const WORK = mkdtempSync(join(tmpdir(), 'agentcli-node22-'))
let node22 = ''

beforeAll(() => {
  writeFileSync(join(WORK, 'package.json'), JSON.stringify({ name: 'node22', private: true }))
  const install = spawnSync('npm', ['install', 'node@22', '--no-save', '--no-audit', '--no-fund'], {
    cwd: WORK,
    encoding: 'utf8',
    timeout: 150_000,
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: process.env.HOME ?? homedir(),
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
    },
  })
  expect(install.status, install.stderr).toBe(0)
  node22 = join(WORK, 'node_modules/.bin/node')
  const version = spawnSync(node22, ['--version'], { encoding: 'utf8' }).stdout.trim()
  expect(version).toMatch(/^v22\./)
  const build = spawnSync(process.execPath, [join(ROOT, 'bin/agentcli-build.js'), TOOL], { encoding: 'utf8' })
  expect(build.status, build.stderr).toBe(0)
}, 180_000)
afterAll(() => rmSync(WORK, { recursive: true, force: true }))

describe('agentcli verify on Node 22', () => {
  it("the sandbox's own proxy agent puts nothing on the target's stderr: --quiet stays quiet, the run is green", async () => {
    // Node 22 itself: the sandbox's variables alone make it warn (what the check used to count).
    const bare = spawnSync(node22, ['-e', '0'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, NODE_USE_ENV_PROXY: '1', HTTP_PROXY: 'http://127.0.0.1:9' },
    })
    expect(bare.stderr).toMatch(/UNDICI-EHPA/)
    const run = await runTool(AGENTCLI, ['verify', '--', node22, join(TOOL, 'bin/run.js')], { timeoutMs: 150_000 })
    const report = run.json as { ok: boolean; data?: { checks: Array<{ id: string; status: string }> } }
    expect(run.code, run.stdout).toBe(0)
    expect(report.data?.checks.find((c) => c.id === 'stdio.quiet_stderr')?.status).toBe('pass')
  }, 180_000)
})
