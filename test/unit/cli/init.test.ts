import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { envelopeViolations } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { ROOT } from '../../support/helpers.js'
import { runInProcess } from '../../support/in-process.js'
import { tempDirs } from '../../support/temp-dirs.js'

// `agentcli init`, the whole command in-process (test/support/in-process.ts; it still asks the staged tool for its
// reference in a child, as its build does). What needs a process of its own (a working directory, a preloaded old
// Node, a broken TMPDIR) is test/cli/scaffold/init.test.ts.
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

const temp = tempDirs('agentcli-init-test-')
/** One HOME for the file: what init's child (the staged tool's `reference`) compiles is kept for the next one. */
const HOME = mkdtempSync(join(tmpdir(), 'agentcli-init-home-'))
afterAll(() => rmSync(HOME, { recursive: true, force: true }))
const init = (args: string[]) => runInProcess(ROOT, ['init', ...args], { env: { HOME } })
/** One `init <dir>/mytool`, made once and only read by the tests that look at what it wrote. */
let shared: Promise<{ dir: string; run: Awaited<ReturnType<typeof init>> }> | undefined
const sharedRoot = mkdtempSync(join(tmpdir(), 'agentcli-init-test-'))
afterAll(() => rmSync(sharedRoot, { recursive: true, force: true }))
function initMytool() {
  const dir = join(sharedRoot, 'mytool')
  shared ??= init([dir]).then((run) => ({ dir, run }))
  return shared
}
type Ok = { ok: true; data: { dir: string; name: string; bin: string; agentcli: string; files: string[] } }
type Failed = { ok: false; error: { code: string; details: Record<string, unknown> } }
type ToolPjson = {
  name: string
  bin: Record<string, string>
  engines: { node: string }
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  scripts: Record<string, string>
  oclif: { commands: { strategy: string; target: string; identifier: string } }
  agentcli: { bundle: boolean }
}

describe('agentcli init', () => {
  it('writes a tool repository into a new directory, named after it, on ^ this agentcli', async () => {
    const { dir, run } = await initMytool()
    expect(run.code, run.stdout).toBe(0)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    const { data } = run.json as Ok
    expect(data).toMatchObject({ dir, name: 'mytool', bin: 'mytool', agentcli: `^${VERSION}` })
    for (const file of [
      'package.json',
      'bin/run.js',
      'src/index.ts',
      'src/commands/list.ts',
      'src/commands/set.ts',
      'src/commands/export.ts',
      'test/commands.test.ts',
      'CHANGELOG.md',
      'README.md',
      'skills/mytool/SKILL.md',
      '.gitignore',
      '.github/workflows/ci.yml',
      '.github/workflows/release.yml',
      'tsconfig.json',
    ]) {
      expect(data.files).toContain(file)
      expect(existsSync(join(dir, file)), file).toBe(true)
    }
    const pjson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as ToolPjson
    expect(pjson.name).toBe('mytool')
    expect(pjson.bin).toEqual({ mytool: 'bin/run.js' })
    expect(pjson.engines.node).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as ToolPjson).engines.node,
    )
    expect(pjson.dependencies).toEqual({ agentcli: `^${VERSION}` })
    expect(Object.keys(pjson.devDependencies).sort()).toEqual([
      '@types/node',
      'ajv',
      'ajv-formats',
      'esbuild',
      'typescript',
    ])
    expect(pjson.oclif.commands).toEqual({ strategy: 'explicit', target: './dist/index.js', identifier: 'COMMANDS' })
    expect(pjson.agentcli.bundle).toBe(true)
    expect(pjson.scripts.test).toContain('npm run build')
    expect(pjson.scripts.build).toContain('agentcli-build --skill check')
  })

  it("renders the tool's SKILL.md from its reference: its own commands, the built-ins it chose, no update or job", async () => {
    const dir = join(temp(), 'notes')
    expect((await init([dir])).code).toBe(0)
    const skill = readFileSync(join(dir, 'skills/notes/SKILL.md'), 'utf8')
    for (const command of ['list', 'set', 'export', 'reference', 'doctor'])
      expect(skill).toContain(`\`notes ${command}\``)
    expect(skill).not.toContain('`notes update')
    expect(skill).not.toContain('`notes job')
    expect(readFileSync(join(dir, 'src/index.ts'), 'utf8')).toContain('builtins({ update: false, jobs: false })')
  })

  it('takes the package name from --name (a scoped name gives the unscoped bin) and the dependency from --agentcli', async () => {
    const dir = join(temp(), 'somewhere')
    const tgz = join(temp(), 'agentcli-0.1.0.tgz')
    writeFileSync(tgz, '')
    const run = await init([dir, '--name', '@acme/weather', '--agentcli', `file:${tgz}`])
    expect(run.code, run.stdout).toBe(0)
    expect((run.json as Ok).data).toMatchObject({ name: '@acme/weather', bin: 'weather' })
    const pjson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as ToolPjson
    expect(pjson.bin).toEqual({ weather: 'bin/run.js' })
    expect(pjson.dependencies.agentcli).toBe(`file:${tgz}`)
    // A tarball is installed as a package: no npm setting needed.
    expect(existsSync(join(dir, '.npmrc'))).toBe(false)
    expect(existsSync(join(dir, 'skills/weather/SKILL.md'))).toBe(true)
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('# @acme/weather')
    // A scope's slash never lands in a file name the tool makes (its test sandbox prefix).
    expect(readFileSync(join(dir, 'test/commands.test.ts'), 'utf8')).toContain("sandbox('weather-test-')")
  })

  it('takes a built checkout as --agentcli: a copy with its dependencies (install-links), not a bare symlink', async () => {
    const dir = join(temp(), 'mytool')
    const run = await init([dir, '--agentcli', ROOT])
    expect(run.code, run.stdout).toBe(0)
    expect((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as ToolPjson).dependencies.agentcli).toBe(
      `file:${ROOT}`,
    )
    expect(readFileSync(join(dir, '.npmrc'), 'utf8')).toMatch(/^install-links=true$/m)
    expect((run.json as Ok).data.files).toContain('.npmrc')
  })

  it('refuses a local --agentcli that cannot work, naming the fix, and writes nothing', async () => {
    const base = temp()
    const notBuilt = join(base, 'checkout')
    mkdirSync(notBuilt)
    writeFileSync(join(notBuilt, 'package.json'), JSON.stringify({ name: 'agentcli', version: '0.1.0' }))
    const other = join(base, 'other')
    mkdirSync(other)
    writeFileSync(join(other, 'package.json'), JSON.stringify({ name: 'left-pad' }))
    for (const [spec, fix] of [
      [join(base, 'missing.tgz'), /npm pack/],
      [notBuilt, /npm ci && npm run build/],
      [`file:${other}`, /root of an agentcli checkout/],
    ] as const) {
      const dir = join(base, 'tool')
      const run = await init([dir, '--agentcli', spec])
      expect(run.code, run.stdout).toBe(2)
      const { error } = run.json as Failed
      expect(error.code).toBe('E_VALIDATION')
      expect(error.details).toMatchObject({ param: '--agentcli', got: spec })
      expect(String(error.details.fix)).toMatch(fix)
      expect(existsSync(dir)).toBe(false)
    }
  })

  it('writes CI that tests and verifies, and a release workflow that publishes with provenance', async () => {
    const { dir, run } = await initMytool()
    expect(run.code).toBe(0)
    const ci = readFileSync(join(dir, '.github/workflows/ci.yml'), 'utf8')
    expect(ci).toContain('run: npm test')
    expect(ci).toMatch(/agentcli verify .*-- node bin\/run\.js/)
    // The tests and verify run on every LTS line the tool's engines allow (each `^<major>.` of the range), not one.
    type Step = { uses?: string; with?: Record<string, unknown> }
    const job = (parse(ci) as { jobs: { test: { strategy?: { matrix: Record<string, unknown> }; steps: Step[] } } })
      .jobs.test
    const engines = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as ToolPjson).engines.node
    const lines = [...engines.matchAll(/\^(\d+)\./g)].map((m) => Number(m[1]))
    expect(lines, engines).toContain(22)
    expect(job.strategy?.matrix['node-version']).toEqual(lines)
    const setup = job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'))
    expect(setup?.with?.['node-version']).toBe(['$', '{{ matrix.node-version }}'].join(''))
    const release = readFileSync(join(dir, '.github/workflows/release.yml'), 'utf8')
    expect(release).toContain('npm publish --provenance')
    expect(release).toContain('id-token: write')
    // The template's own placeholders are filled; a workflow expression is left alone.
    expect(release).toContain(['$', '{{ secrets.NPM_TOKEN }}'].join(''))
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).not.toMatch(/\{\{(name|bin|date)\}\}/)
  })

  it('refuses a directory that is not empty, and writes nothing into it', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'notes.txt'), 'mine')
    const run = await init([dir, '--name', 'mytool'])
    expect(run.code).toBe(6)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    const failed = run.json as Failed
    expect(failed.error.code).toBe('E_CONFLICT')
    expect(failed.error.details).toMatchObject({ reason: 'not_empty', path: dir, entries: ['notes.txt'] })
    expect(existsSync(join(dir, 'package.json'))).toBe(false)
  })

  it('refuses a path that is a file', async () => {
    const file = join(temp(), 'taken')
    writeFileSync(file, '')
    const run = await init([file])
    expect(run.code).toBe(6)
    expect((run.json as Failed).error.details).toMatchObject({ reason: 'not_a_directory' })
  })

  it('rejects a name npm would not accept with E_VALIDATION, exit 2', async () => {
    const dir = join(temp(), 'x')
    const run = await init([dir, '--name', 'My Tool'])
    expect(run.code).toBe(2)
    expect((run.json as Failed).error).toMatchObject({
      code: 'E_VALIDATION',
      details: { param: '--name', got: 'My Tool' },
    })
    expect(existsSync(dir)).toBe(false)
  })

  it('is E_USAGE without a directory', async () => {
    const run = await runInProcess(ROOT, ['init'], { env: { HOME } })
    expect(run.code).toBe(2)
    expect((run.json as Failed).error.code).toBe('E_USAGE')
  })
})
