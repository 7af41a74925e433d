// The published packages, as a new author gets them: pack the repository exactly as `npm publish` would, install
// the tarball into an empty project outside the checkout, start a tool with `agentcli init`, and run that tool's
// own `npm install && npm test` and `agentcli verify`. Third-party packages come from npm's cache when it has them.
import { type SpawnSyncReturns, spawnSync } from 'node:child_process'
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { x as untar } from 'tar'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { getNode22 } from '../../support/node22.js'
import { packedAgentcli } from '../../support/packed.js'

const WORK = mkdtempSync(join(tmpdir(), 'agentcli-pack-'))
const HOME = join(WORK, 'home')
const HOST = join(WORK, 'host')
const TOOL = join(WORK, 'mytool')
const FROM_CHECKOUT = join(WORK, 'fromcheckout')
/** A minimal environment: nothing from the developer's npm configuration or the test runner's npm_* leaks in. */
const ENV = {
  PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
  HOME,
  npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  NO_COLOR: '1',
  // The extra CA this machine may need to reach the registry, when it is set.
  ...Object.fromEntries(
    ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE']
      .filter((name) => process.env[name])
      .map((name) => [name, process.env[name]!]),
  ),
}

function sh(cwd: string, command: string, args: string[], timeout = 180_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd,
    env: ENV,
    encoding: 'utf8',
    timeout,
    killSignal: 'SIGKILL',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}
function ok(run: SpawnSyncReturns<string>, what: string): string {
  expect(run.error, what).toBeUndefined()
  expect(run.status, `${what}\n${run.stdout}\n${run.stderr}`).toBe(0)
  return run.stdout
}
type Pjson = { name: string; version: string; bundleDependencies?: string[] } & Record<string, unknown>
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Pjson

/** Every symlink under `dir` whose target lies in the checkout: an install that still leans on the repository. */
function linksIntoCheckout(dir: string): string[] {
  const found: string[] = []
  const checkout = realpathSync(ROOT)
  const walk = (path: string) => {
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) {
      let target = ''
      try {
        target = realpathSync(path)
      } catch {
        return
      }
      if (target === checkout || target.startsWith(`${checkout}/`)) found.push(`${path} -> ${target}`)
    } else if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return found
}

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
    // npm install already ran above; the rest runs as typed.
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

describe('from a checkout, nothing on the registry', () => {
  it("agentcli init --agentcli <checkout>: the tool's npm install copies agentcli with its dependencies, its commands run, npm test passes", () => {
    // As the README says it, from the checkout: `node bin/agentcli.js init ../mytool --agentcli .`.
    const init = sh(ROOT, 'node', ['bin/agentcli.js', 'init', FROM_CHECKOUT, '--agentcli', '.'])
    expect((JSON.parse(ok(init, 'agentcli init --agentcli <checkout>')) as { ok: boolean }).ok).toBe(true)
    ok(sh(FROM_CHECKOUT, 'npm', ['install']), 'the tool: npm install')
    // A copy, not a symlink into the checkout: what the tool runs is what a tarball would give it.
    expect(lstatSync(join(FROM_CHECKOUT, 'node_modules/agentcli')).isSymbolicLink()).toBe(false)
    expect(linksIntoCheckout(join(FROM_CHECKOUT, 'node_modules'))).toEqual([])
    // `npm test` is `npm run build && node --test`: its build is the one the runs below use.
    const test = ok(sh(FROM_CHECKOUT, 'npm', ['test']), 'the tool: npm run build && node --test')
    expect(test).toMatch(/fail 0\b/)
    // Run unbundled too: the tool's modules load agentcli and its dependencies from the tool's node_modules.
    for (const env of [{}, { AGENTCLI_NO_BUNDLE: '1' }]) {
      const list = spawnSync('node', ['bin/run.js', 'list'], {
        cwd: FROM_CHECKOUT,
        env: { ...ENV, ...env },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(list.status, `${JSON.stringify(env)} ${list.stdout}${list.stderr}`).toBe(0)
      expect(JSON.parse(list.stdout)).toMatchObject({ ok: true, data: { items: [] } })
    }
  }, 300_000)
})
