import { type StdioOptions, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import Module from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Script } from 'node:vm'
import { build } from 'esbuild'
import { afterEach, describe, expect, it } from 'vitest'
import { bundleTool } from '../../../src/build/bundle.js'
import { sourcePatches } from '../../../src/build/bundle-plugins.js'
import { SOURCE_PATCHES, type SourcePatch } from '../../../src/build/source-patches.js'
import { useToolCopy } from '../../support/copy.js'
import { ROOT, seed, TASKS_BIN, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const copy = useToolCopy()

/** What a bundled `reference list` (oclif's Config loaded) loads: Node built-ins, and whether ICU compared. */
function loadedBy(
  bin: string,
  args = ['reference', 'list'],
  stdio: StdioOptions = 'pipe',
): { builtins: string[]; collator: boolean } {
  seed(box(), [{ id: '1', title: 'a' }])
  const out = join(box().root, 'builtins.json')
  const result = spawnSync(
    process.execPath,
    ['--import', join(ROOT, 'test/fixtures/record-builtins.mjs'), bin, ...args],
    {
      env: { ...box().env, RECORD_BUILTINS_TO: out },
      encoding: 'utf8',
      stdio,
    },
  )
  expect(result.status, result.stderr).toBe(0)
  return JSON.parse(readFileSync(out, 'utf8'))
}

/** The installed package a bundle of the example tool takes, found the way esbuild resolves it. */
function installed(name: string, from = join(ROOT, 'examples/tasks')): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dir === dirname(dir)) throw new Error(`${name} is not installed`)
  }
}

function occurrences(text: string, find: string): number {
  return text.split(find).length - 1
}

describe('every source patch applies to the installed packages', () => {
  it.each(SOURCE_PATCHES.map((patch) => [patch.name, patch] as const))('%s', (_, patch) => {
    const pkg = installed(patch.package)
    const source = readFileSync(join(pkg, patch.file), 'utf8')
    expect(occurrences(source, patch.find), `${patch.package}/${patch.file}`).toBe(patch.count ?? 1)
    const patched = source.replaceAll(patch.find, patch.replace)
    expect(occurrences(patched, patch.find)).toBe(0)
    // Still a module that compiles: a patch that breaks the syntax would fail only when the bundle loads.
    expect(() => new Script(Module.wrap(patched))).not.toThrow()
    expect(patch.why.length).toBeGreaterThan(40)
  })

  it('names each patch once', () => {
    const names = SOURCE_PATCHES.map((patch) => patch.name)
    expect(new Set(names).size).toBe(names.length)
  })
})

describe('the source-patch plugin', () => {
  const made: string[] = []
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  /** A project with one package, `fake`, whose index says `greeting = "hello"`. */
  function project(): string {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-patches-'))
    made.push(dir)
    mkdirSync(join(dir, 'node_modules/fake/lib'), { recursive: true })
    writeFileSync(join(dir, 'node_modules/fake/package.json'), '{"name":"fake","main":"lib/index.js"}')
    writeFileSync(join(dir, 'node_modules/fake/lib/index.js'), 'exports.greeting = "hello";\n')
    writeFileSync(join(dir, 'node_modules/fake/lib/unused.js'), 'exports.unused = 1;\n')
    return dir
  }

  function bundle(dir: string, patches: SourcePatch[]) {
    return build({
      stdin: { contents: 'module.exports = require("fake").greeting', resolveDir: dir },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      logLevel: 'silent',
      plugins: [sourcePatches(patches)],
    })
  }

  const patch = (over: Partial<SourcePatch>): SourcePatch => ({
    name: 'greet',
    package: 'fake',
    file: 'lib/index.js',
    find: '"hello"',
    replace: '"patched"',
    why: 'a test',
    ...over,
  })

  it('replaces the text in the file it names', async () => {
    const result = await bundle(project(), [patch({})])
    expect(result.outputFiles[0]!.text).toContain('"patched"')
    expect(result.outputFiles[0]!.text).not.toContain('"hello"')
  })

  it('fails the build when the text is not found, or found another number of times', async () => {
    await expect(bundle(project(), [patch({ find: '"goodbye"' })])).rejects.toThrow(
      /source patch greet \(fake\/lib\/index\.js\) no longer applies: its text occurs 0 times/,
    )
    await expect(bundle(project(), [patch({ count: 2 })])).rejects.toThrow(/occurs 1 times .*not 2/)
  })

  it('fails the build when the patched file is never loaded (the package moved its code)', async () => {
    await expect(bundle(project(), [patch({ file: 'lib/unused.js', find: '1' })])).rejects.toThrow(
      /source patch greet \(fake\/lib\/unused\.js\) no longer applies: the file was never loaded/,
    )
  })
})

describe('what the patches keep off a bundled `list`', () => {
  it('loads no child_process and builds no ICU collator; the same bundle unpatched does both', async () => {
    const patched = loadedBy(TASKS_BIN)
    expect(patched.builtins).not.toContain('child_process')
    expect(patched.collator).toBe(false)
    const dir = copy('examples/tasks')
    await bundleTool(dir, { patches: [] })
    const stock = loadedBy(join(dir, 'bin/run.js'))
    expect(stock.builtins).toContain('child_process')
    expect(stock.collator).toBe(true)
  })

  it('`reference --compact` from /dev/null, stderr a pipe: no readline, perf_hooks, fs/promises, crypto, net or tty', () => {
    const { builtins } = loadedBy(TASKS_BIN, ['reference', '--compact'], ['ignore', 'pipe', 'pipe'])
    for (const name of ['readline', 'perf_hooks', 'fs/promises', 'crypto', 'net', 'tty'])
      expect(builtins, name).not.toContain(name)
  })

  it('a missing argument is still read from stdin, unless stdin is the null device (nothing to read)', () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const reference = (input: string | 'ignore') => {
      const result = spawnSync(process.execPath, [TASKS_BIN, 'reference'], {
        // oclif gives up on stdin after 10 ms by default, a window a loaded machine closes.
        env: { ...box().env, OCLIF_STDIN_TIMEOUT_MS: '20000' },
        encoding: 'utf8',
        ...(input === 'ignore' ? { stdio: ['ignore', 'pipe', 'pipe'] } : { input }),
      })
      expect(result.status, result.stderr).toBe(0)
      return JSON.parse(result.stdout).data as { commands: Array<{ path: string }> }
    }
    expect(reference('list\n').commands.map((c) => c.path)).toEqual(['list'])
    const whole = reference('ignore').commands.map((c) => c.path)
    expect(whole.length).toBeGreaterThan(10)
    expect(reference('').commands.map((c) => c.path)).toEqual(whole)
  })

  it("still prints oclif's debug output when DEBUG asks for it, and nothing when it does not", () => {
    seed(box(), [{ id: '1', title: 'a' }])
    // `reference --full` of a command loads oclif's Config (a `list` never does).
    const list = (debug: string) =>
      spawnSync(process.execPath, [TASKS_BIN, 'reference', 'list', '--full'], {
        env: { ...box().env, DEBUG: debug },
        encoding: 'utf8',
      })
    const asked = list('oclif:config')
    expect(asked.status, asked.stderr).toBe(0)
    expect(asked.stderr).toContain('oclif:config loading core plugin')
    const quiet = list('')
    expect(quiet.status).toBe(0)
    expect(quiet.stderr).toBe('')
  })
})
