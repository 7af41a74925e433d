import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Sandbox, sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { invocation as fuzzInvocation, prng } from '../../../src/verify/fuzz.js'
import type { Ref } from '../../../src/verify/reference-types.js'
import { useToolCopy } from '../../support/copy.js'
import { ROOT, seed, shiftedClock, storePath, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'

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

/**
 * stdout with the values that differ between two runs blanked: how long they took, and a preview's fresh token
 * (random id, its own clock reading).
 */
const stable = (stdout: string) =>
  stdout
    .replace(/"duration_ms": ?\d+/g, '"duration_ms":0')
    .replace(/ct_2\.[\w.-]+/g, '<token>')
    .replace(/(expires_at"?: *"?)\d{4}-\d\d-\d\dT[\d:.]+Z/g, '$1<time>')

async function expectSame(args: string[], env: Record<string, string> = {}) {
  const { fast, normal } = await both(args, env)
  const label = `${JSON.stringify(args)} ${JSON.stringify(env)}`
  expect(stable(fast.stdout), label).toBe(stable(normal.stdout))
  expect(fast.code, label).toBe(normal.code)
}

/** Which bundles a call compiled, and which module files it loaded. */
function traced(args: string[], env: Record<string, string> = {}) {
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
      env: { PATH: process.env.PATH, ...box().env, ...env, RECORD_SCRIPTS_TO: scripts, RECORD_MODULES_TO: modules },
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

  it('leaves help, topics, unknown commands, unproven writes and `--` to oclif’s path (the fast bundle never loads)', () => {
    for (const args of [
      ['list', '--help'],
      ['help', 'list'],
      ['job'],
      ['nope'],
      ['lst'],
      [],
      ['delete', '1', '--', '2'],
      ['edit', '1', '--help'],
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
    // `login`/`logout` are `local`, `import`/`export`/`sync` streams or async jobs: oclif's path.
    expect(Object.keys(TABLE.routes).sort()).toEqual(['create', 'delete', 'edit', 'get', 'list', 'whoami'])
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
    expect(fastOnly.commands.length).toBe(6)
    const writes = new Set(fastOnly.commands.filter((c) => c.type === 'write').map((c) => c.path))
    expect([...writes].sort()).toEqual(['create', 'delete', 'edit'])
    // The confirm secret exists before two runs at once could both create it.
    await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run'])
    const r = prng(17)
    const plans = Array.from({ length: 300 }, () => fuzzInvocation(r, fastOnly))
    for (const plan of plans) {
      // A write is fuzzed as a preview only (with a stray --confirm it is E_USAGE): nothing is ever applied.
      const write = writes.has(plan.args[0]!) && !plan.args.includes('--dry-run')
      await expectSame(write ? [...plan.args, '--dry-run'] : plan.args, plan.env)
    }
  }, 600_000)
})

/** The confirm token of a `--dry-run`'s envelope. */
const tokenOf = (run: { json: unknown }) => (run.json as { data: { confirm_token: string } }).data.confirm_token
const FAST: Record<string, string> = {}
const OCLIF: Record<string, string> = { AGENTCLI_FAST: '0' }

describe('writes on the fast path', () => {
  it('a dry-run, a refusal and a confirm of `edit`, `create` and `delete` evaluate no oclif; a fleet goes to oclif’s path', () => {
    seed(box(), SEEDED)
    const fastOnly = (args: string[]) => {
      const run = traced(args)
      expect(run.bundles, args.join(' ')).toEqual(['fast.cjs'])
      expect(run.modules.filter((m) => m.includes('/@oclif/core/'))).toEqual([])
      return { code: run.code, json: JSON.parse(run.stdout) }
    }
    const preview = fastOnly(['edit', '1', '--status', 'done', '--dry-run'])
    expect(preview.code).toBe(0)
    const done = fastOnly(['edit', '1', '--status', 'done', '--confirm', tokenOf(preview)])
    expect([done.code, done.json.data.status, done.json.data.version]).toEqual([0, 'done', 2])
    const refused = fastOnly(['edit', '2', '--status', 'done'])
    expect([refused.code, refused.json.error.code]).toEqual([5, 'E_CONFIRMATION_REQUIRED'])
    const create = fastOnly(['create', '--title', 'new', '--idempotency-key', 'k1', '--dry-run'])
    const created = fastOnly(['create', '--title', 'new', '--idempotency-key', 'k1', '--confirm', tokenOf(create)])
    expect([created.code, created.json.data.id]).toEqual([0, '8'])
    const replayed = fastOnly(['create', '--title', 'new', '--request-id', 'k1'])
    expect([replayed.json.data.id, replayed.json.meta.replayed]).toEqual(['8', true])
    const batch = fastOnly(['delete', '5', '6', '--dry-run'])
    const deleted = fastOnly(['delete', '5', '6', '--confirm', tokenOf(batch)])
    expect([deleted.code, deleted.json.data.results.map((r: { ok: boolean }) => r.ok)]).toEqual([0, [true, true]])
    // The shared store's drivers are not in the fast bundle: oclif's path serves every call on a fleet (and a
    // state URL that cannot be used: its E_CONFIG is oclif's path's); so does a deprecated flag, when used.
    for (const env of [{ TASKS_STATE_URL: 'redis://127.0.0.1:1/0' }, { TASKS_STATE_URL: 'nope://x' }])
      expect(traced(['edit', '1', '--status', 'open', '--dry-run'], env).bundles).toEqual(['fast.cjs', 'bundle.cjs'])
    expect(traced(['create', '--name', 'old', '--dry-run']).bundles).toEqual(['fast.cjs', 'bundle.cjs'])
    // What the fast bundle holds of the write path: the flow, the token, the ledgers and the lock, crypto lazily.
    const fast = readFileSync(join(ROOT, 'examples/tasks/dist/fast.cjs'), 'utf8')
    for (const marker of ['already_used', 'E_CONFIRMATION_REQUIRED', 'idempotency'])
      expect(fast.includes(marker), marker).toBe(true)
    expect(fast.includes('require("node:crypto")') || fast.includes("require('node:crypto')")).toBe(false)
    expect(fast.includes('require("pg")')).toBe(false)
  })

  it('a token minted on one path confirms on the other, exactly once; a spent token is refused alike', async () => {
    for (const [mint, spend] of [
      [FAST, OCLIF],
      [OCLIF, FAST],
    ] as const) {
      seed(box(), SEEDED)
      const args = ['edit', '3', '--status', 'done']
      const preview = await tasks(box(), [...args, '--dry-run'], { env: mint })
      const token = tokenOf(preview)
      const applied = await tasks(box(), [...args, '--confirm', token], { env: spend })
      expect([applied.code, (applied.json as { data: { version: number } }).data.version]).toEqual([0, 2])
      const again = await tasks(box(), [...args, '--confirm', token], { env: mint })
      const third = await tasks(box(), [...args, '--confirm', token], { env: spend })
      expect(again.code).toBe(6)
      expect((again.json as { error: { details: { reason: string } } }).error.details.reason).toBe('already_used')
      expect(stable(again.stdout)).toBe(stable(third.stdout))
      expect(third.code).toBe(again.code)
    }
  }, 60_000)

  it('refusals, bad, forged, expired and mismatched tokens give the same envelope on both paths', async () => {
    seed(box(), SEEDED)
    const token = tokenOf(await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run']))
    const [head, body, mac] = token.split('.') as [string, string, string]
    const flipped = `${head}.${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`
    const edits: Array<[string[], Record<string, string>?]> = [
      [['edit', '1', '--status', 'done']],
      [['edit', '1', '--status', 'done', '--confirm', 'bogus']],
      [['edit', '1', '--status', 'done', '--confirm', '']],
      [['edit', '1', '--status', 'done', '--confirm', 'ct_2.x.y']],
      [['edit', '1', '--status', 'done', '--confirm', flipped]],
      [['edit', '1', '--status', 'done', `--confirm=${flipped}`]],
      // Bound to what was previewed: other arguments, another command, another principal.
      [['edit', '1', '--status', 'open', '--confirm', token]],
      [['edit', '2', '--status', 'done', '--confirm', token]],
      [['create', '--title', 'x', '--confirm', token]],
      [['edit', '1', '--status', 'done', '--confirm', token], { TASKS_ACCOUNT: 'someone-else', TASKS_TOKEN: 't' }],
      [['edit', '1', '--status', 'done', '--confirm', token], shiftedClock(3_600_000)],
      [['edit', '1', '--status', 'done', '--confirm', token, '--dry-run']],
      [['edit', '1', '--status', 'done', '--confirm']],
      [['edit', '1', '--dry-run']],
      [['edit', '1', '--status', 'nope', '--dry-run']],
      [['edit', '999', '--status', 'done', '--dry-run']],
      [['edit', '999', '--status', 'done']],
      [['edit', '--status', 'done', '--dry-run']],
      [['edit', '1', '2', '--status', 'done', '--dry-run']],
      [['edit', '1', '--status', 'done', '--dry-run', '--bogus']],
      [['edit', '1', '--status', 'done', '--dry-run', '--format', 'text']],
      [['edit', '1', '--status', 'done', '--dry-run', '--fields', 'confirm_token']],
      [['--format', 'text', 'edit', '1', '--title', ' ', '--dry-run']],
      [['edit', '1', '--status', 'done', '--dry-run'], { TASKS_FORMAT: 'yaml' }],
      [['create', '--dry-run']],
      [['create', '--title', '', '--dry-run']],
      [['create', '--title', 'x']],
      [['create', '--title', 'x', '--idempotency-key', 'k', '--dry-run']],
      [['create', '--title', 'x', '--request-id=k', '--dry-run', '--compact']],
      [['create', '--name', 'x', '--dry-run']],
      [['delete']],
      [['delete', '1', '2']],
      [['delete', '1', '2', '--dry-run']],
      [['delete', '1', '1', '2', '--dry-run', '--format', 'text']],
      [['delete', '999', '--dry-run']],
      [['delete', '1', '999', '--dry-run']],
      [['delete', '1', '999', '--confirm', token]],
      [['delete', '1', '--bogus', '--dry-run']],
      [['delete', '--dry-run', '1', '-x']],
      [['delete', '1', '2', '--idempotency-key', 'b', '--dry-run']],
    ]
    for (const [args, env] of edits) await expectSame(args, env)
    // None of them spent the token.
    expect((await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token])).code).toBe(0)
  }, 240_000)

  it('hands a write over until its token is spent; past that, reaching the unprovided fails closed', async () => {
    // A copy whose `edit` reads a config property only oclif's Config has: in plan() (before the token is spent),
    // or in apply() (after).
    const patched = (from: string, to: string) =>
      copy('examples/tasks', (d) => {
        const fast = join(d, 'dist/fast.cjs')
        const text = readFileSync(fast, 'utf8')
        expect(text.includes(from), from).toBe(true)
        writeFileSync(fast, text.replace(from, to))
      })
    const run = (dir: string, args: string[], env: Record<string, string> = {}) => {
      const scripts = join(box().root, 'scripts.txt')
      const r = spawnSync(
        process.execPath,
        ['--import', join(ROOT, 'test/fixtures/record-scripts.mjs'), join(dir, 'bin/run.js'), ...args],
        {
          encoding: 'utf8',
          env: { PATH: process.env.PATH, ...box().env, ...env, RECORD_SCRIPTS_TO: scripts },
        },
      )
      const bundles = readFileSync(scripts, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((f) => f.replace(/.*\/dist\//, ''))
      return { code: r.status, json: JSON.parse(r.stdout), bundles }
    }
    const edit = ['edit', '1', '--status', 'done']
    seed(box(), SEEDED)
    const inPlan = patched('await this.parse(_EditTask);', 'await this.parse(_EditTask);this.config.plugins;')
    const preview = run(inPlan, [...edit, '--dry-run'])
    expect([preview.code, preview.bundles]).toEqual([0, ['fast.cjs', 'bundle.cjs']])
    const done = run(inPlan, [...edit, '--confirm', preview.json.data.confirm_token])
    expect([done.code, done.bundles, done.json.data.version]).toEqual([0, ['fast.cjs', 'bundle.cjs'], 2])

    seed(box(), SEEDED)
    const inApply = patched(
      'const task=TaskStore.expect(file,edit.id,edit.version);',
      'this.config.plugins;const task=TaskStore.expect(file,edit.id,edit.version);',
    )
    const token = run(inApply, [...edit, '--dry-run']).json.data.confirm_token
    const failed = run(inApply, [...edit, '--confirm', token])
    expect([failed.code, failed.bundles, failed.json.error.code]).toEqual([1, ['fast.cjs'], 'E_INTERNAL'])
    expect(failed.json.error.message).toContain('config.plugins')
    // The token stays spent (fail closed), on either path; the task was not changed.
    for (const env of [FAST, OCLIF])
      expect(run(inApply, [...edit, '--confirm', token], env).json.error.details.reason).toBe('already_used')
    expect(run(inApply, ['get', '1']).json.data.version).toBe(1)

    // A plan() that swallows the fallback and goes on: the write completes on the fast path, once; it is not sent
    // round again on oclif's path (where its spent token would be refused although the change landed).
    seed(box(), SEEDED)
    const swallowed = patched(
      'await this.parse(_EditTask);',
      'await this.parse(_EditTask);try{this.config.plugins}catch{}',
    )
    const again = run(swallowed, [...edit, '--dry-run']).json.data.confirm_token
    const landed = run(swallowed, [...edit, '--confirm', again])
    expect([landed.code, landed.bundles, landed.json.data.version]).toEqual([0, ['fast.cjs'], 2])
    expect(run(swallowed, ['get', '1']).json.data).toMatchObject({ status: 'done', version: 2 })
  }, 60_000)

  it('a whole write session gives the same envelopes and audit lines on both paths (idempotent replays too)', async () => {
    const boxes = [sandbox(), sandbox()]
    try {
      const session = async (b: Sandbox, env: Record<string, string>) => {
        seed(b, SEEDED)
        const out: string[] = []
        const call = async (args: string[]) => {
          const run = await tasks(b, args, { env })
          out.push(`${run.code} ${blank(run.stdout)}`)
          return run
        }
        const edit = ['edit', '4', '--title', 'renamed']
        const token = tokenOf(await call([...edit, '--dry-run']))
        await call(edit)
        await call([...edit, '--confirm', token])
        await call([...edit, '--confirm', token])
        const create = ['create', '--title', 'keyed', '--idempotency-key', 'key-1']
        const minted = tokenOf(await call([...create, '--dry-run']))
        await call([...create, '--confirm', minted])
        await call(create)
        await call([...create, '--dry-run'])
        await call(['create', '--title', 'other', '--idempotency-key', 'key-1', '--dry-run'])
        await call(['create', '--title', 'x', '--bogus'])
        // A batch that partly fails, then resumes under its key: only what did not land is deleted.
        const batch = ['delete', '1', '2', '999', '--idempotency-key', 'batch-1']
        await call([...batch, '--confirm', tokenOf(await call([...batch, '--dry-run']))])
        seedMore(b)
        await call([...batch, '--confirm', tokenOf(await call([...batch, '--dry-run']))])
        await call(batch)
        await call(['list'])
        const audit = readFileSync(join(b.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
        const lines = audit
          .trim()
          .split('\n')
          .map((line) => {
            const { time: _t, duration_ms: _d, token_id, ...rest } = JSON.parse(line) as Record<string, unknown>
            return { ...rest, token_id: token_id === null ? null : 'id' } as Record<string, unknown>
          })
        return { out, lines }
      }
      const fast = await session(boxes[0]!, FAST)
      const normal = await session(boxes[1]!, OCLIF)
      expect(fast.out).toEqual(normal.out)
      expect(fast.lines).toEqual(normal.lines)
      expect(fast.lines.map((l) => [l.mode, l.result_code, l.exit_code])).toEqual([
        ['dry_run', 'OK', 0],
        ['refused', 'E_CONFIRMATION_REQUIRED', 5],
        ['confirm', 'OK', 0],
        ['refused', 'E_CONFLICT', 6],
        ['dry_run', 'OK', 0],
        ['confirm', 'OK', 0],
        ['replay', 'OK', 0],
        ['dry_run', 'OK', 0],
        ['dry_run', 'E_CONFLICT', 6],
        ['refused', 'E_USAGE', 2],
        ['dry_run', 'OK', 0],
        ['confirm', 'E_NOT_FOUND', 3],
        ['dry_run', 'OK', 0],
        ['confirm', 'OK', 0],
        ['replay', 'OK', 0],
      ])
    } finally {
      for (const b of boxes) b.cleanup()
    }
  }, 120_000)
})

/** Add task 999 to a sandbox's store: the item a batch could not find exists when it resumes. */
function seedMore(b: Sandbox) {
  const file = storePath(b)
  const store = JSON.parse(readFileSync(file, 'utf8')) as { tasks: Array<Record<string, unknown>> }
  const at = '2026-01-02T03:04:05.000Z'
  store.tasks.push({ id: '999', title: 'late', status: 'open', created_at: at, updated_at: at, version: 1 })
  writeFileSync(file, JSON.stringify(store))
}

/** A write's envelope with what differs between two sandboxes blanked: tokens, their ids, clock readings. */
const blank = (stdout: string) =>
  stable(stdout)
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/"token_id": ?"[^"]*"/g, '"token_id":"<id>"')

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
