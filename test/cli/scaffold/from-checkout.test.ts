// The other way to start a tool before agentcli is on the registry (the README's): `agentcli init --agentcli .` in
// a checkout, the tool's `npm install` (a copy of the checkout, with its dependencies) and `npm test`; then the
// new tool's own README, run as typed. Third-party packages come from npm's cache when it has them. The path
// from the packed tarball: test/cli/scaffold/pack-install.test.ts.
import { spawnSync } from 'node:child_process'
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { authorShell, linksIntoCheckout, ok } from '../../support/scaffold.js'

const WORK = mkdtempSync(join(tmpdir(), 'agentcli-checkout-'))
const HOME = join(WORK, 'home')
const TOOL = join(WORK, 'fromcheckout')
const { env: ENV, sh } = authorShell(HOME)
beforeAll(() => mkdirSync(HOME))
afterAll(() => rmSync(WORK, { recursive: true, force: true }))

describe('from a checkout, nothing on the registry', () => {
  it("agentcli init --agentcli <checkout>: the tool's npm install copies agentcli with its dependencies, its commands run, npm test passes", () => {
    // As the README says it, from the checkout: `node bin/agentcli.js init ../mytool --agentcli .`.
    const init = sh(ROOT, 'node', ['bin/agentcli.js', 'init', TOOL, '--agentcli', '.'])
    expect((JSON.parse(ok(init, 'agentcli init --agentcli <checkout>')) as { ok: boolean }).ok).toBe(true)
    ok(sh(TOOL, 'npm', ['install']), 'the tool: npm install')
    // A copy, not a symlink into the checkout: what the tool runs is what a tarball would give it.
    expect(lstatSync(join(TOOL, 'node_modules/agentcli')).isSymbolicLink()).toBe(false)
    expect(linksIntoCheckout(join(TOOL, 'node_modules'))).toEqual([])
    // `npm test` is `npm run build && node --test`: its build is the one the runs below use.
    const test = ok(sh(TOOL, 'npm', ['test']), 'the tool: npm run build && node --test')
    expect(test).toMatch(/fail 0\b/)
    // Run unbundled too: the tool's modules load agentcli and its dependencies from the tool's node_modules.
    for (const env of [{}, { AGENTCLI_NO_BUNDLE: '1' }]) {
      const list = spawnSync('node', ['bin/run.js', 'list'], {
        cwd: TOOL,
        env: { ...ENV, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(list.status, `${JSON.stringify(env)} ${list.stdout}${list.stderr}`).toBe(0)
      expect(JSON.parse(list.stdout)).toMatchObject({ ok: true, data: { items: [] } })
    }
  }, 300_000)

  it("the new tool's README: its set-up-and-run command prints one envelope; its test command is npm test; that build forgets a removed CHANGELOG.md", () => {
    const changelog = () =>
      JSON.parse(ok(sh(TOOL, 'node', ['bin/run.js', 'changelog']), 'changelog')) as { data: { entries: unknown[] } }
    expect(changelog().data.entries.length).toBe(1)
    // Removed before the README's own build runs, so that one build also shows the embedded changelog forgotten.
    rmSync(join(TOOL, 'CHANGELOG.md'))
    const readme = readFileSync(join(TOOL, 'README.md'), 'utf8')
    const [setUp, test] = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim())
    expect(test).toBe('npm test')
    const steps = setUp!.split(' && ')
    expect(steps[0]).toBe('npm install')
    expect(steps[1]).toBe('npm run build')
    // npm install already ran above (from the checkout); the rest runs as typed.
    const run = sh(TOOL, 'sh', ['-c', steps.slice(1).join(' && ')], 120_000)
    const stdout = ok(run, setUp!)
    const envelope = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { ok: boolean; data: { items: unknown[] } }
    expect(envelope.ok).toBe(true)
    // The run command's own stdout is the envelope alone (the build before it talks on its own stdout).
    const alone = ok(sh(TOOL, 'sh', ['-c', steps.at(-1)!]), steps.at(-1)!)
    expect(JSON.parse(alone)).toMatchObject({ ok: true })
    expect(changelog().data.entries).toEqual([])
    // A build and five runs of the tool: the default limit is a slow machine's build alone.
  }, 180_000)
})
