import { spawnSync } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, seed, TASKS_BIN, useSandbox } from '../../support/helpers.js'

const box = useSandbox()

/** What a command loads: every module URL, via a preloaded load hook (the bundle itself is compiled by V8 directly). */
function modulesLoadedBy(args: string[], extraEnv: Record<string, string> = {}): string[] {
  const out = join(box().root, 'modules.txt')
  const result = spawnSync(
    process.execPath,
    ['--import', join(ROOT, 'test/fixtures/record-modules.mjs'), TASKS_BIN, ...args],
    {
      env: { PATH: process.env.PATH, ...box().env, ...extraEnv, RECORD_MODULES_TO: out },
      encoding: 'utf8',
    },
  )
  expect(result.status, result.stdout).toBe(0)
  return readFileSync(out, 'utf8').split('\n')
}

const HEAVY = [
  '/zod/',
  // zod as the bundle loads it: one file beside the bundle (src/build/zod-chunk.ts).
  '/bundle-zod.cjs',
  '/@sigstore/',
  '/@napi-rs/keyring',
  '/tar/',
  '/yaml/',
  '/msw/',
  '/keep-a-changelog/',
  '/ajv/',
  '/shell-quote/',
  // The state-store drivers and queue engines: only with a state URL, and only for what needs the store.
  '/node_modules/pg/',
  '/pg-boss/',
  '/ioredis/',
  '/bullmq/',
]

describe('the start-up path', () => {
  it('`tasks list` runs from the bundle: no oclif, framework or command module file, nothing heavy', () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const loaded = modulesLoadedBy(['list'])
    // The boot is one file (scripts/bundle-boot.mjs): its own modules are not loaded one by one.
    expect(loaded.some((m) => m.endsWith('/dist/boot/start.js'))).toBe(true)
    expect(loaded.filter((m) => m.includes('/dist/boot/') && !m.endsWith('/start.js'))).toEqual([])
    expect(loaded.filter((m) => m.includes('/@oclif/core/'))).toEqual([])
    expect(loaded.filter((m) => m.includes('/examples/tasks/dist/'))).toEqual([])
    expect(loaded.filter((m) => HEAVY.some((h) => m.includes(h)))).toEqual([])
  })

  it('`tasks list` and `tasks get` load no node:tty (which loads net and the streams) nor an AbortController, to a pipe or to /dev/null', () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const builtinsOf = (args: string[], stdout: 'pipe' | number) => {
      const out = join(box().root, 'builtins.json')
      const result = spawnSync(
        process.execPath,
        ['--import', join(ROOT, 'test/fixtures/record-builtins.mjs'), TASKS_BIN, ...args],
        { env: { PATH: process.env.PATH, ...box().env, RECORD_BUILTINS_TO: out }, stdio: ['ignore', stdout, 'pipe'] },
      )
      expect(result.status, String(result.stderr)).toBe(0)
      return (JSON.parse(readFileSync(out, 'utf8')) as { builtins: string[] }).builtins
    }
    const nul = openSync('/dev/null', 'w')
    try {
      for (const args of [['list'], ['get', '1']])
        for (const stdout of ['pipe', nul] as const) {
          const loaded = builtinsOf(args, stdout)
          expect(loaded, `${args.join(' ')} > ${stdout}`).not.toContain('tty')
          expect(loaded).not.toContain('net')
          // The session's AbortController is made when something asks for its signal (src/runtime/session.ts).
          expect(loaded).not.toContain('internal/abort_controller')
        }
    } finally {
      closeSync(nul)
    }
  })

  it('a dry-run and its confirm load no node:crypto (the write path hashes with fast-sha256, bundled)', () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const run = (args: string[]) => {
      const out = join(box().root, 'builtins.json')
      const result = spawnSync(
        process.execPath,
        ['--import', join(ROOT, 'test/fixtures/record-builtins.mjs'), TASKS_BIN, ...args],
        { env: { PATH: process.env.PATH, ...box().env, RECORD_BUILTINS_TO: out }, encoding: 'utf8' },
      )
      expect(result.status, result.stdout).toBe(0)
      const { builtins, required } = JSON.parse(readFileSync(out, 'utf8')) as { builtins: string[]; required: string[] }
      // Everything a write hashes with is in the bundle (and its code cache): nothing is required from node_modules.
      expect(required.filter((file) => file.includes('node_modules'))).toEqual([])
      return { stdout: result.stdout, builtins }
    }
    const dry = run(['edit', '1', '--status', 'done', '--dry-run'])
    expect(dry.builtins).not.toContain('crypto')
    const token = (JSON.parse(dry.stdout) as { data: { confirm_token: string } }).data.confirm_token
    const confirm = run(['edit', '1', '--status', 'done', '--confirm', token])
    expect(JSON.parse(confirm.stdout)).toMatchObject({ ok: true, data: { status: 'done' } })
    expect(confirm.builtins).not.toContain('crypto')
    expect(run(['create', '--title', 'b', '--dry-run']).builtins).not.toContain('crypto')
  })

  it('the bundle evaluates a command’s own framework modules, never agentcli’s whole index', () => {
    const bundle = readFileSync(join(ROOT, 'examples/tasks/dist/bundle.cjs'), 'latin1')
    // esbuild names each module's wrapper; a module's factory first calls the wrappers of what it imports.
    const initOf = (file: string) => new RegExp(`var (init_[\\w$]+)=__esm\\(\\{"${file}"`).exec(bundle)?.[1]
    const importsOf = (file: string) =>
      // (its namespace first, when it has one: src/build/lazy-namespaces.ts)
      new RegExp(
        `"${file}"\\(\\)\\{(?:"use strict";)?(?:__export\\([^;]*\\);)?((?:[\\w$]+=[^;]*;)*(?:init_[\\w$]+\\(\\);)*)`,
      ).exec(bundle)?.[1] ?? ''
    // The index re-exports the write path (WriteCommand, the confirm flow, batches, locks) with everything else.
    expect(initOf('dist/index\\.js')).toBeUndefined()
    const list = importsOf('examples/tasks/dist/commands/list\\.js')
    expect(list).toContain(`${initOf('dist/command\\.js')}();`)
    expect(list).not.toContain(`${initOf('dist/write-command\\.js')}();`)
    expect(importsOf('dist/builtins/commands/context\\.js')).toContain(`${initOf('dist/command\\.js')}();`)
  })

  it('`tasks --version` and `tasks reference` stay off zod as well (reference reads the manifest)', () => {
    for (const args of [['--version'], ['reference']]) {
      const loaded = modulesLoadedBy(args)
      expect(
        loaded.filter((m) => HEAVY.some((h) => m.includes(h))),
        args.join(' '),
      ).toEqual([])
    }
  })

  it('sees a heavy module when one is loaded (--fields validates against the zod schema)', () => {
    const loaded = modulesLoadedBy(['list', '--fields', 'id'])
    // The bundle's zod is its chunk, one instance for the framework and the tool; nothing of node_modules' zod.
    expect(loaded.some((m) => m.endsWith('/examples/tasks/dist/bundle-zod.cjs'))).toBe(true)
    expect(loaded.filter((m) => m.includes('/zod/'))).toEqual([])
    expect(
      modulesLoadedBy(['list', '--fields', 'id'], { AGENTCLI_NO_BUNDLE: '1' }).some((m) => m.includes('/zod/')),
    ).toBe(true)
  })

  it('from the modules (AGENTCLI_NO_BUNDLE=1), loads oclif from node_modules and still nothing heavy', () => {
    const loaded = modulesLoadedBy(['list'], { AGENTCLI_NO_BUNDLE: '1' })
    expect(loaded.length).toBeGreaterThan(50)
    expect(loaded.some((m) => m.includes('/@oclif/core/'))).toBe(true)
    expect(loaded.some((m) => m.endsWith('/examples/tasks/dist/commands/list.js'))).toBe(true)
    expect(loaded.filter((m) => HEAVY.some((h) => m.includes(h)))).toEqual([])
  })

  it('loads a state-store driver only when a state URL is set, and then only for a write (never for `list`)', () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const driver = (m: string) => m.includes('/node_modules/pg/') || m.includes('/ioredis/')
    expect(modulesLoadedBy(['delete', '1', '--dry-run']).filter(driver)).toEqual([])
    // A closed port: the dry-run answers anyway (its audit record falls back to the local file).
    for (const url of ['postgres://root@127.0.0.1:9/test', 'redis://127.0.0.1:9']) {
      expect(modulesLoadedBy(['list'], { TASKS_STATE_URL: url }).filter(driver)).toEqual([])
      expect(modulesLoadedBy(['delete', '1', '--dry-run'], { TASKS_STATE_URL: url }).some(driver)).toBe(true)
    }
  })
})
