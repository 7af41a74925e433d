import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { useToolCopy } from '../../support/copy.js'
import { env, ROOT, seed, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'

const box = useSandbox({ ownCodeCache: true })
const copy = useToolCopy()
const BUILD = join(ROOT, 'bin/agentcli-build.js')

function cacheDir(): string {
  return join(box().env.XDG_CACHE_HOME!, 'agentcli', 'code-cache')
}

function caches(dir = cacheDir()): string[] {
  try {
    return readdirSync(dir).filter((name) => name.endsWith('.v8'))
  } catch {
    return []
  }
}

function build(dir: string): ReturnType<typeof spawnSync> {
  return spawnSync(process.execPath, [BUILD, dir], { encoding: 'utf8' })
}

/** Run a copied tool's own bin in the test's sandbox. */
function runCopy(dir: string, args: string[]): ReturnType<typeof spawnSync> & { stdout: string; stderr: string } {
  return spawnSync(process.execPath, [join(dir, 'bin/run.js'), ...args], { encoding: 'utf8', env: { ...box().env } })
}

describe('the bundled start', () => {
  it('writes a private code cache on the first run and reuses it untouched', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const first = await tasks(box(), ['list'])
    expect(first.code, first.stderr).toBe(0)
    const [name] = caches()
    expect(name).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-list\.v8$/)
    const file = join(cacheDir(), name!)
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const written = statSync(file).mtimeMs
    const second = await tasks(box(), ['list'])
    expect(env(second).data).toEqual(env(first).data)
    expect(env(second).data.items.map((t: { id: string }) => t.id)).toEqual(['1'])
    expect(statSync(file).mtimeMs).toBe(written)
    expect(second.stderr).toBe('')
  })

  it('replaces a corrupt cache (V8 rejects it) and still answers correctly', async () => {
    await tasks(box(), ['get', '9'])
    const file = join(cacheDir(), caches()[0]!)
    writeFileSync(file, Buffer.alloc(statSync(file).size, 7))
    const run = await tasks(box(), ['get', '9'])
    expect(run.code).toBe(3)
    expect(env(run).error.code).toBe('E_NOT_FOUND')
    expect(readFileSync(file).equals(Buffer.alloc(statSync(file).size, 7))).toBe(false)
  })

  it('neither reads nor writes a cache in a directory others can write, or one that is a link', async () => {
    mkdirSync(cacheDir(), { recursive: true })
    chmodSync(cacheDir(), 0o777)
    const open = await tasks(box(), ['list'])
    expect(open.code).toBe(0)
    expect(caches()).toEqual([])

    const elsewhere = join(box().root, 'elsewhere')
    mkdirSync(elsewhere, { mode: 0o700 })
    const linked = join(box().root, 'linked')
    symlinkSync(elsewhere, linked)
    const viaLink = await tasks(box(), ['list'], { env: { AGENTCLI_CODE_CACHE_DIR: linked } })
    expect(viaLink.code).toBe(0)
    expect(caches(elsewhere)).toEqual([])
  })

  it('does not read a cache file others could have written, even a valid one', async () => {
    await tasks(box(), ['list'])
    const file = join(cacheDir(), caches()[0]!)
    chmodSync(file, 0o666)
    expect((await tasks(box(), ['list'])).code).toBe(0)
    // Not read, so not accepted: replaced by this run's own file.
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it.runIf(process.getuid?.() === 0)('does not read a cache file owned by another user', async () => {
    await tasks(box(), ['list'])
    const file = join(cacheDir(), caches()[0]!)
    chownSync(file, 1, 1)
    expect((await tasks(box(), ['list'])).code).toBe(0)
    expect(statSync(file).uid).toBe(0)
  })

  it('clears caches untouched for 30 days when it writes one, and keeps recent ones', async () => {
    mkdirSync(cacheDir(), { recursive: true, mode: 0o700 })
    const old = join(cacheDir(), '00000000-00000000.v8')
    const recent = join(cacheDir(), '11111111-11111111.v8')
    writeFileSync(old, 'x', { mode: 0o600 })
    writeFileSync(recent, 'x', { mode: 0o600 })
    const longAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000)
    utimesSync(old, longAgo, longAgo)
    expect((await tasks(box(), ['list'])).code).toBe(0)
    expect(caches()).toContain('11111111-11111111.v8')
    expect(caches()).not.toContain('00000000-00000000.v8')
    expect(caches()).toHaveLength(2)
  })

  it('writes nothing with AGENTCLI_CODE_CACHE=0', async () => {
    const run = await tasks(box(), ['list', '--fields', 'id'], { env: { AGENTCLI_CODE_CACHE: '0' } })
    expect(run.code).toBe(0)
    expect(caches()).toEqual([])
    expect(existsSync(join(cacheDir(), 'modules'))).toBe(false)
  })

  it("keeps Node's compile cache of what a run loads as modules in the private code-cache directory", async () => {
    // zod (its chunk beside the bundle) for --fields; from the modules, the framework's own files.
    for (const extra of [{}, { AGENTCLI_NO_BUNDLE: '1' }]) {
      rmSync(cacheDir(), { recursive: true, force: true })
      expect((await tasks(box(), ['list', '--fields', 'id'], { env: extra })).code).toBe(0)
      expect(statSync(cacheDir()).mode & 0o777).toBe(0o700)
      expect(readdirSync(join(cacheDir(), 'modules'), { recursive: true }).length).toBeGreaterThan(1)
    }
    // A directory others can write holds no compiled code the tool would run: neither cache is kept there.
    rmSync(cacheDir(), { recursive: true, force: true })
    mkdirSync(cacheDir(), { recursive: true, mode: 0o700 })
    chmodSync(cacheDir(), 0o777)
    expect((await tasks(box(), ['list', '--fields', 'id'], { env: { AGENTCLI_NO_BUNDLE: '1' } })).code).toBe(0)
    expect(readdirSync(cacheDir())).toEqual([])
  })

  it("agentcli's own bin keeps Node's compile cache there too, never in the shared temporary directory", async () => {
    // Its bin enabled Node's compile cache in Node's default place, `$TMPDIR/node-compile-cache`: compiled code in a
    // directory another local user can create first.
    const tmp = join(box().root, 'tmp')
    mkdirSync(tmp)
    const run = await runTool(join(ROOT, 'bin/agentcli.js'), ['--version'], { env: { ...box().env, TMPDIR: tmp } })
    expect(run.code).toBe(0)
    expect(readdirSync(tmp)).toEqual([])
    expect(readdirSync(join(cacheDir(), 'modules'), { recursive: true }).length).toBeGreaterThan(1)
  })

  it('answers the same from the modules (AGENTCLI_NO_BUNDLE=1) as from the bundle', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const bundled = await tasks(box(), ['get', '1', '--fields', 'id,title'])
    const modules = await tasks(box(), ['get', '1', '--fields', 'id,title'], { env: { AGENTCLI_NO_BUNDLE: '1' } })
    expect(modules.code).toBe(0)
    // --fields imports zod from node_modules: the bundle's dynamic import() leaves no loader warning behind.
    expect(bundled.stderr).toBe('')
    expect(env(modules).data).toEqual(env(bundled).data)
    expect(env(modules).data).toEqual({ id: '1', title: 'a' })
  })

  it('hashes as the modules do: a token minted from either start confirms from the other', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const modules = { env: { AGENTCLI_NO_BUNDLE: '1' } }
    for (const [mint, confirm] of [
      [{}, modules],
      [modules, {}],
    ] as const) {
      const preview = await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run'], mint)
      const token = (env(preview).data as { confirm_token: string }).confirm_token
      const done = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token], confirm)
      expect(env(done).ok, done.stdout).toBe(true)
    }
  })
})

describe('agentcli-build with agentcli.bundle', () => {
  const PROBE = `import { AgentCommand, output } from 'agentcli'
process.stderr.write('probe module evaluated\\n')
export default class Probe extends AgentCommand {
  static summary = 'Say that the probe ran'
  static description = 'A command whose module announces that it was evaluated.'
  static examples = ['<%= config.bin %> probe']
  static output = output((z) => z.object({ probed: z.boolean() }))
  async execute() {
    return { probed: true }
  }
}
`

  /** The example with the probe, built once; the cache test below runs it too, as the last one to use it. */
  let probed: { dir: string; built: ReturnType<typeof build> } | undefined
  afterAll(() => probed && rmSync(probed.dir, { recursive: true, force: true }))
  function probeTool(): { dir: string; built: ReturnType<typeof build> } {
    if (probed) return probed
    // Inside the repository, as useToolCopy makes it, so agentcli resolves; kept for the file, not one test.
    const dir = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-'))
    cpSync(join(ROOT, 'examples/tasks'), dir, { recursive: true, filter: (p) => !p.includes('node_modules') })
    writeFileSync(join(dir, 'dist/commands/probe.js'), PROBE)
    const index = join(dir, 'dist/index.js')
    writeFileSync(
      index,
      `${readFileSync(index, 'utf8')}\nimport Probe from './commands/probe.js';\nCOMMANDS.probe = Probe;\n`,
    )
    probed = { dir, built: build(dir) }
    return probed
  }

  it('evaluates only the module of the command that runs', () => {
    const { dir, built } = probeTool()
    expect(built.status, String(built.stderr)).toBe(0)
    // The example's 26 commands (its own with the deprecated `show`, the built-ins with approve, mcp) and the probe.
    expect(String(built.stderr)).toMatch(/27 commands, changelog \d+, bundle \d+ KiB/)
    const list = runCopy(dir, ['list'])
    expect(list.status, list.stderr).toBe(0)
    expect(list.stderr).not.toContain('probe module evaluated')
    const probe = runCopy(dir, ['probe'])
    expect(probe.status, probe.stderr).toBe(0)
    expect(probe.stderr).toContain('probe module evaluated')
    expect(JSON.parse(probe.stdout).data).toEqual({ probed: true })
  })

  it('runs from the modules, saying why on stderr, when the bundle is damaged or throws while loading', () => {
    for (const damage of ['\n}}} not javascript', '\nthrow new Error("bundle boom")\n']) {
      const dir = copy('examples/tasks', (d) => {
        const bundle = join(d, 'dist/bundle.cjs')
        writeFileSync(bundle, `${readFileSync(bundle, 'utf8')}${damage}`)
      })
      // `reference` runs from dist/bundle.cjs like every command.
      const run = runCopy(dir, ['reference'])
      expect(run.status, run.stderr).toBe(0)
      expect(JSON.parse(run.stdout).ok).toBe(true)
      expect(run.stderr).toMatch(/dist\/bundle\.cjs could not be loaded \(.+\); running from the modules/)
    }
  })

  it('keeps one cache per bundle: a rebuilt bundle replaces the old cache', () => {
    const { dir, built } = probeTool()
    expect(built.status).toBe(0)
    const run = () => runCopy(dir, ['reference'])
    expect(run().status).toBe(0)
    const before = caches()
    expect(before).toHaveLength(1)
    const bundle = join(dir, 'dist/bundle.cjs')
    writeFileSync(bundle, `${readFileSync(bundle, 'utf8')}\n// rebuilt\n`)
    expect(run().status).toBe(0)
    const after = caches()
    expect(after).toHaveLength(1)
    expect(after[0]!.split('-')[0]).toBe(before[0]!.split('-')[0])
    expect(after[0]).not.toBe(before[0])
  })
})

// The bin in the repository is the one users run; it must be the bundled one.
it('the example tool ships a bundle next to its modules', () => {
  expect(statSync(join(ROOT, 'examples/tasks/dist/bundle.cjs')).size).toBeGreaterThan(100_000)
  expect(readFileSync(TASKS_BIN, 'utf8')).toContain("import('agentcli/boot')")
})
