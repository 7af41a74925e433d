import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { invocation as fuzzInvocation, prng } from '../src/verify/fuzz.js'
import type { Ref } from '../src/verify/reference-types.js'
import { useToolCopy } from './copy.js'
import { ROOT, seed, TASKS_BIN, tasks, useSandbox } from './helpers.js'

const box = useSandbox()
const copy = useToolCopy()
const TABLE = JSON.parse(readFileSync(join(ROOT, 'examples/tasks/dist/fast-routes.json'), 'utf8')) as {
  ids: string[]
  routes: Record<string, unknown>
}

/** The same call on both paths: the fast one (the default) and oclif's, forced with AGENTCLI_FAST=0. */
async function both(args: string[], env: Record<string, string> = {}) {
  const [fast, normal] = await Promise.all([
    tasks(box(), args, { env }),
    tasks(box(), args, { env: { ...env, AGENTCLI_FAST: '0' } }),
  ])
  return { fast, normal }
}

/** stdout with the one value that differs between two runs (how long they took) blanked. */
const stable = (stdout: string) => stdout.replace(/"duration_ms": ?\d+/g, '"duration_ms":0')

async function expectSame(args: string[], env: Record<string, string> = {}) {
  const { fast, normal } = await both(args, env)
  const label = `${JSON.stringify(args)} ${JSON.stringify(env)}`
  expect(stable(fast.stdout), label).toBe(stable(normal.stdout))
  expect(fast.code, label).toBe(normal.code)
}

/** Which bundles a call compiled, and which module files it loaded. */
function traced(args: string[]) {
  const scripts = join(box().root, 'scripts.txt')
  const modules = join(box().root, 'modules.txt')
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      join(ROOT, 'test/fixtures/record-scripts.mjs'),
      '--import',
      join(ROOT, 'test/fixtures/record-modules.mjs'),
      TASKS_BIN,
      ...args,
    ],
    {
      env: { PATH: process.env.PATH, ...box().env, RECORD_SCRIPTS_TO: scripts, RECORD_MODULES_TO: modules },
      encoding: 'utf8',
    },
  )
  const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean)
  return {
    code: result.status,
    stdout: result.stdout,
    bundles: lines(scripts).map((f) => f.replace(/.*\/dist\//, '')),
    modules: lines(modules),
  }
}

const SEEDED = Array.from({ length: 7 }, (_, i) => ({ id: String(i + 1), title: `task ${i + 1}` }))

describe('the fast path', () => {
  it('is taken for `list`, `get` and `--version`: no oclif is evaluated, oclif’s bundle is not even compiled', () => {
    seed(box(), SEEDED)
    for (const args of [['list'], ['get', '1'], ['--version'], ['list', '--format', 'text', '--limit', '2']]) {
      const run = traced(args)
      expect(run.code, args.join(' ')).toBe(0)
      expect(run.bundles, args.join(' ')).toEqual(['fast.cjs'])
      expect(run.modules.filter((m) => m.includes('/@oclif/core/'))).toEqual([])
    }
    // What the fast bundle holds of oclif: its parser and flag builders, never its Config, plugins or help.
    const fast = readFileSync(join(ROOT, 'examples/tasks/dist/fast.cjs'), 'utf8')
    for (const marker of ['loadPluginsAndCommands', 'wsl-utils', 'showCommandHelp', 'supportsColor'])
      expect(fast.includes(marker), marker).toBe(false)
    expect(fast.includes('Nonexistent flag')).toBe(true)
  })

  it('leaves help, topics, unknown commands, writes and `--` to oclif’s path (the fast bundle never loads)', () => {
    for (const args of [
      ['list', '--help'],
      ['help', 'list'],
      ['job'],
      ['nope'],
      ['lst'],
      [],
      ['create', 'x'],
      ['reference'],
      ['list', '--', 'x'],
      ['login', 'approve'],
    ]) {
      expect(traced(args).bundles, args.join(' ')).toEqual(['bundle.cjs'])
    }
  })

  it('hands a run it cannot serve to oclif’s path in the same process, before printing anything', () => {
    // `--format yaml --version`: the table takes it for `--version`, the runner sees the flag error first.
    const run = traced(['--format', 'yaml', '--version'])
    expect(run.bundles).toEqual(['fast.cjs', 'bundle.cjs'])
    expect(JSON.parse(run.stdout).error.code).toBe('E_VALIDATION')
  })

  it('routes only the commands the build proves simple', () => {
    expect(Object.keys(TABLE.routes).sort()).toEqual(['get', 'list', 'whoami'])
    // Every id, so a longer id that is not a fast route (`login approve`) still wins over a shorter one.
    expect(TABLE.ids).toContain('login:approve')
  })
})

describe('the fast path and oclif’s path answer alike', () => {
  const EDGES: Array<[string[], Record<string, string>?]> = [
    [['list']],
    [['list', '--compact']],
    [['list', '--limit', '2']],
    [['list', '--limit=2', '--status=open']],
    [['list', '--limit', '0']],
    [['list', '--limit', '101']],
    [['list', '--limit', 'x']],
    [['list', '--limit']],
    [['list', '--limit', '2', '--limit', '3']],
    [['list', '--status', 'nope']],
    [['list', '--status', 'done']],
    [['list', '--bogus']],
    [['list', '--bogus', '--also=1', '-x']],
    [['list', 'stray']],
    [['list', '--fields', 'id,title']],
    [['list', '--fields', 'nope']],
    [['list', '--fields', ',']],
    [['list', '--fields', 'items.id,next_cursor']],
    [['list', '--format', 'text']],
    [['list', '--format', 'text', '--quiet']],
    [['list', '--format', 'raw']],
    [['list', '--format', 'yaml']],
    [['list', '--json', '--format', 'text']],
    [['list', '--cursor', 'garbage']],
    [['list', '--no-input', '--quiet', '--compact']],
    [['--format', 'text', 'list']],
    [['--compact', 'list', '--limit', '3']],
    [['list'], { TASKS_FORMAT: 'text' }],
    [['list'], { TASKS_FORMAT: 'yaml' }],
    [['list'], { TASKS_HTTP_RETRIES: '99' }],
    [['list'], { TASKS_DATA_DIR: '/nonexistent/dir' }],
    [['get', '1']],
    [['get', '1', '--fields', 'title,status']],
    [['get', '1', '--format', 'text']],
    [['get', '999']],
    [['get']],
    [['get', '1', '2']],
    [['get', '']],
    [['get', '-1']],
    [['get', '1', '--limit', '3']],
    [['whoami']],
    [['--version']],
    [['--version', '--format', 'text']],
    [['--json', '--version']],
    [['--version', '--compact']],
    [['--version', 'list']],
    [['--format=text', '--version']],
    [['--version'], { TASKS_FORMAT: 'text' }],
    [['list', '--limit', '3', '--status', 'open', '--fields', 'id'], { TASKS_FORMAT: 'text' }],
    [['get', '1'], { TASKS_TOKEN: 'task 1' }],
  ]

  it('for a corpus of edge invocations, on an empty store and a seeded one', async () => {
    for (const [args, env] of EDGES.slice(0, 8)) await expectSame(args, env)
    seed(box(), SEEDED)
    for (const [args, env] of EDGES) await expectSame(args, env)
  }, 240_000)

  it('with an update notice in the cache (and with a corrupt one, which both remove)', async () => {
    seed(box(), SEEDED)
    const cache = join(box().env.XDG_CACHE_HOME!, 'tasks')
    mkdirSync(cache, { recursive: true })
    const notice = {
      latest_version: '9.0.0',
      checked_at: '2026-01-01T00:00:00.000Z',
      install_method: 'npm',
      recommended_command: 'npm install -g tasks-example',
      release_url: null,
      severity: 'info',
    }
    writeFileSync(join(cache, 'update-notice.json'), JSON.stringify(notice))
    for (const args of [['list'], ['get', '1', '--format', 'text'], ['--version']]) await expectSame(args)
    for (const args of [['list'], ['--version']]) {
      writeFileSync(join(cache, 'update-notice.json'), '{"latest_version": "not a version"')
      await expectSame(args)
      expect(existsSync(join(cache, 'update-notice.json'))).toBe(false)
    }
  }, 60_000)

  it('across cursor pagination: the cursor one path mints, the other accepts', async () => {
    seed(box(), SEEDED)
    const { fast, normal } = await both(['list', '--limit', '3'])
    expect(stable(fast.stdout)).toBe(stable(normal.stdout))
    const cursor = (fast.json as { data: { next_cursor: string } }).data.next_cursor
    await expectSame(['list', '--limit', '3', '--cursor', cursor])
    await expectSame(['list', '--limit', '4', '--cursor', cursor])
  }, 60_000)

  it('for 300 invocations of the fuzzer (`agentcli verify --fuzz`) on the fast routes', async () => {
    seed(box(), SEEDED)
    const ref = (await tasks(box(), ['reference'])).json as { data: Ref }
    const fastOnly = {
      ...ref.data,
      commands: ref.data.commands.filter((c) => c.path.replaceAll(' ', ':') in TABLE.routes),
    }
    expect(fastOnly.commands.length).toBe(3)
    const r = prng(17)
    const plans = Array.from({ length: 300 }, () => fuzzInvocation(r, fastOnly))
    for (const plan of plans) await expectSame(plan.args, plan.env)
  }, 600_000)
})

describe('the fast bundle', () => {
  it('has its own code cache, written by its first run, beside the main bundle’s', () => {
    seed(box(), SEEDED)
    const cacheDir = join(box().env.XDG_CACHE_HOME!, 'agentcli', 'code-cache')
    const caches = () => (existsSync(cacheDir) ? readdirSync(cacheDir).filter((f) => f.endsWith('.v8')) : [])
    expect(traced(['list']).code).toBe(0)
    expect(caches()).toHaveLength(1)
    expect(traced(['get', '1']).code).toBe(0)
    expect(caches()).toHaveLength(1)
    expect(traced(['reference']).code).toBe(0)
    expect(caches()).toHaveLength(2)
  })

  it('is skipped without a word when it cannot be loaded: oclif’s path serves the call', () => {
    const dir = copy('examples/tasks', (d) => {
      const fast = join(d, 'dist/fast.cjs')
      writeFileSync(fast, `${readFileSync(fast, 'utf8')}\n}}} not javascript`)
    })
    const run = spawnSync(process.execPath, [join(dir, 'bin/run.js'), 'list'], {
      encoding: 'utf8',
      env: { ...box().env },
    })
    expect(run.status, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).ok).toBe(true)
    expect(run.stderr).toBe('')
  })
})
