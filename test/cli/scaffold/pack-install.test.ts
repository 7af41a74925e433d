// The published packages, as a new author gets them: pack the repository exactly as `npm publish` would, install
// the tarball into an empty project outside the checkout, start a tool with `agentcli init`, and run that tool's
// own `npm install && npm test` and `agentcli verify`. Third-party packages come from npm's cache when it has them.
// The other path, from a checkout, and the new tool's README: test/cli/scaffold/from-checkout.test.ts (a file of its
// own, so that the two journeys run on two workers at once).
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { x as untar } from 'tar'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { getNode22 } from '../../support/node22.js'
import { packedAgentcli } from '../../support/packed.js'
import { authorShell, linksIntoCheckout, ok } from '../../support/scaffold.js'

const WORK = mkdtempSync(join(tmpdir(), 'agentcli-pack-'))
const HOME = join(WORK, 'home')
const HOST = join(WORK, 'host')
const TOOL = join(WORK, 'mytool')
const { sh } = authorShell(HOME)
type Pjson = { name: string; version: string; bundleDependencies?: string[] } & Record<string, unknown>
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Pjson

let agentcliTgz = ''
let node22 = ''
beforeAll(async () => {
  mkdirSync(HOME)
  // The run's one `npm pack` of the repository and its one Node 22, shared read-only with the other files.
  ;[agentcliTgz, node22] = await Promise.all([packedAgentcli(), getNode22()])
}, 300_000)
afterAll(() => rmSync(WORK, { recursive: true, force: true }))

describe('the packed package', () => {
  it('carries real version ranges only (no file:, link: or workspace:), the built-ins inside its dist', async () => {
    const unpacked = join(WORK, 'unpacked')
    mkdirSync(unpacked, { recursive: true })
    await untar({ file: agentcliTgz, cwd: unpacked })
    const agentcli = readJson(join(unpacked, 'package/package.json'))
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'])
      for (const [dep, range] of Object.entries((agentcli[field] ?? {}) as Record<string, string>))
        expect(range, `${agentcli.name} ${field}.${dep}`).not.toMatch(/^(file|link|workspace|portal):/)
    // One package: nothing bundled inside it.
    expect(agentcli.bundleDependencies).toBeUndefined()
    const files = readdirSync(join(unpacked, 'package'), { recursive: true }).map(String)
    expect(files.filter((file) => file.startsWith('node_modules'))).toEqual([])
    for (const file of [
      'dist/builtins/index.js',
      'dist/builtins/commands/reference.js',
      'templates/init/src/index.ts',
      'templates/init/_gitignore',
      'bin/agentcli.js',
      // verify's network cut, preloaded into a Node target by path.
      'dist/verify/net-cut.cjs',
    ])
      expect(files, file).toContain(file)
  })

  it('publish clean: npm publish --dry-run corrects nothing in the package', () => {
    const run = sh(ROOT, 'npm', ['publish', '--dry-run'], 60_000)
    ok(run, 'npm publish --dry-run')
    // The one warning a dry run without a login always gives is not about the package.
    const warnings = run.stderr.split('\n').filter((l) => /npm (warn|error)/i.test(l) && !/logged in/.test(l))
    expect(warnings).toEqual([])
  })
})

describe('from an empty directory to a verified tool', () => {
  it("npm install <agentcli tarball> alone, agentcli init, the tool's npm install && npm test, agentcli verify", () => {
    const started = performance.now()
    const lap: Record<string, number> = {}
    const mark = (name: string) => {
      lap[name] = Math.round(performance.now() - started)
    }
    mkdirSync(HOST)
    writeFileSync(join(HOST, 'package.json'), JSON.stringify({ name: 'host', version: '1.0.0', private: true }))
    ok(sh(HOST, 'npm', ['install', agentcliTgz]), 'npm install agentcli.tgz')
    mark('install')
    ok(sh(HOST, 'npm', ['ls', '--all'], 60_000), 'npm ls --all')
    expect(linksIntoCheckout(join(HOST, 'node_modules'))).toEqual([])
    expect(lstatSync(join(HOST, 'node_modules/agentcli')).isSymbolicLink()).toBe(false)
    // The built-ins are part of it: agentcli/builtins.
    const imported = sh(HOST, 'node', [
      '--input-type=module',
      '-e',
      "const { COMMANDS } = await import('agentcli/builtins'); console.log(Object.keys(COMMANDS).join(','))",
    ])
    expect(ok(imported, 'import agentcli/builtins')).toContain('reference')

    const init = sh(HOST, join(HOST, 'node_modules/.bin/agentcli'), ['init', TOOL, '--agentcli', agentcliTgz])
    expect((JSON.parse(ok(init, 'agentcli init')) as { ok: boolean }).ok).toBe(true)
    mark('init')
    ok(sh(TOOL, 'npm', ['install']), 'the tool: npm install')
    mark('tool_install')
    ok(sh(TOOL, 'npm', ['ls', '--all'], 60_000), 'the tool: npm ls --all')
    expect(linksIntoCheckout(join(TOOL, 'node_modules'))).toEqual([])
    const test = ok(sh(TOOL, 'npm', ['test']), 'the tool: npm test')
    expect(test).toMatch(/# pass 8\b|ℹ pass 8\b/)
    expect(test).toMatch(/fail 0\b/)
    mark('tool_test')
    // The same built tool's tests on Node 22, the other line its engines allow (its CI matrix runs both): each test
    // spawns the bin on the Node that runs it.
    const test22 = ok(sh(TOOL, node22, ['--test']), 'the tool on Node 22: node --test')
    expect(test22).toMatch(/# pass 8\b|ℹ pass 8\b/)
    expect(test22).toMatch(/fail 0\b/)
    mark('node22_test')
    const verify = sh(TOOL, join(TOOL, 'node_modules/.bin/agentcli'), ['verify', '--', 'node', 'bin/run.js'])
    const report = JSON.parse(ok(verify, 'agentcli verify')) as { ok: boolean; data: { summary: { fail: number } } }
    expect(report.data.summary.fail).toBe(0)
    mark('verified')
    process.stderr.write(`empty directory → verified tool: ${JSON.stringify(lap)} (ms since start)\n`)
    expect(lap.verified).toBeLessThan(240_000)
  }, 300_000)

  it('the new tool ships only the built-ins it chose: no update or job in its reference or its bundle', () => {
    const reference = JSON.parse(ok(sh(TOOL, 'node', ['bin/run.js', 'reference', '--compact']), 'reference')) as {
      data: { commands: Array<{ path: string }> }
    }
    const paths = reference.data.commands.map((c) => c.path)
    expect(paths).toEqual(expect.arrayContaining(['list', 'set', 'export', 'reference', 'context', 'doctor']))
    expect(paths.filter((p) => p === 'update' || p.startsWith('job'))).toEqual([])
    const bundle = readFileSync(join(TOOL, 'dist/bundle.cjs'), 'utf8')
    expect(bundle).toContain('Notes ordered by name')
    expect(bundle).not.toContain('Update this tool: check, preview')
    expect(bundle).not.toContain('Show the state and progress of an async job')
  })
})
