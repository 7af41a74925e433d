import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

// On Node 22 (allowed by engines) the proxy agent verify's sandbox once turned on to cut the network was
// experimental, and Node said so on stderr at every start: the `--quiet` check counted Node's words as the tool's.
// The cut is now a preload (net-cut.cjs); this keeps a Node 22 target green and quiet. A Node 22 from npm (the `node`
// package, a few seconds from npm's cache) runs the target here.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
// A copy of the upstream tool, built here: verify-upstream.test.ts builds the fixture itself, and a build rewrites
// the bundle another worker's calls may be reading. Under test/fixtures/, so the copy finds agentcli.
const TOOL = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-node22-tool-'))
const NET_CUT = join(ROOT, 'dist/verify/net-cut.cjs')
const WORK = mkdtempSync(join(tmpdir(), 'agentcli-node22-'))
let node22 = ''
/**
 * What npm needs of this machine to reach its registry, and nothing else of the caller's environment: the extra CA
 * (a TLS-inspecting proxy's, else SELF_SIGNED_CERT_IN_CHAIN), the proxy variables and npm's own network settings.
 */
const NETWORK_SETTINGS =
  /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|no_proxy|all_proxy|npm_config_(registry|cafile|ca|strict_ssl|proxy|https_proxy|noproxy|cache|userconfig|globalconfig))$/i
const networkEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => NETWORK_SETTINGS.test(e[0]) && e[1] !== undefined),
  )

beforeAll(() => {
  cpSync(join(ROOT, 'test/fixtures/upstream-tool'), TOOL, {
    recursive: true,
    filter: (path) => !path.includes(`${sep}dist`),
  })
  writeFileSync(join(WORK, 'package.json'), JSON.stringify({ name: 'node22', private: true }))
  const install = spawnSync('npm', ['install', 'node@22', '--no-save', '--no-audit', '--no-fund'], {
    cwd: WORK,
    encoding: 'utf8',
    timeout: 150_000,
    env: {
      ...networkEnv(),
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
afterAll(() => {
  rmSync(WORK, { recursive: true, force: true })
  rmSync(TOOL, { recursive: true, force: true })
})

describe('agentcli verify on Node 22', () => {
  it("the sandbox's network cut puts nothing on the target's stderr: --quiet stays quiet, the run is green", async () => {
    // Node 22 itself, with the sandbox's preload: quiet, and a request is refused (no proxy agent, so no warning).
    const bare = spawnSync(
      node22,
      ['-e', "fetch('http://agentcli-verify.invalid/').catch((e) => process.stdout.write(e.cause.code))"],
      { encoding: 'utf8', env: { PATH: process.env.PATH, NODE_OPTIONS: `--require=${NET_CUT}` } },
    )
    expect(bare.stderr).toBe('')
    expect(bare.stdout).toBe('ECONNREFUSED')
    const run = await runTool(AGENTCLI, ['verify', '--', node22, join(TOOL, 'bin/run.js')], { timeoutMs: 150_000 })
    const report = run.json as { ok: boolean; data?: { checks: Array<{ id: string; status: string }> } }
    expect(run.code, run.stdout).toBe(0)
    expect(report.data?.checks.find((c) => c.id === 'stdio.quiet_stderr')?.status).toBe('pass')
  }, 180_000)
})
