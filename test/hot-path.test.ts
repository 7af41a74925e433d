import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, seed, TASKS_BIN, useSandbox } from './helpers.js'

const box = useSandbox()

/** What a command loads: every module URL, via a preloaded load hook. */
function modulesLoadedBy(args: string[]): string[] {
  const out = join(box().root, 'modules.txt')
  const result = spawnSync(
    process.execPath,
    ['--import', join(ROOT, 'test/fixtures/record-modules.mjs'), TASKS_BIN, ...args],
    {
      env: { PATH: process.env.PATH, ...box().env, RECORD_MODULES_TO: out },
      encoding: 'utf8',
    },
  )
  expect(result.status, result.stdout).toBe(0)
  return readFileSync(out, 'utf8').split('\n')
}

const HEAVY = [
  '/zod/',
  '/@sigstore/',
  '/@napi-rs/keyring',
  '/tar/',
  '/yaml/',
  '/msw/',
  '/write-file-atomic/',
  '/proper-lockfile/',
  '/keep-a-changelog/',
  '/ajv/',
  '/shell-quote/',
]

describe('the start-up path', () => {
  it('`tasks list` loads none of the heavy modules', () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const loaded = modulesLoadedBy(['list'])
    expect(loaded.length).toBeGreaterThan(50)
    expect(loaded.some((m) => m.includes('/@oclif/core/'))).toBe(true)
    expect(loaded.filter((m) => HEAVY.some((h) => m.includes(h)))).toEqual([])
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
    expect(modulesLoadedBy(['list', '--fields', 'id']).some((m) => m.includes('/zod/'))).toBe(true)
  })

  it('loads only the command it runs', () => {
    const loaded = modulesLoadedBy(['list'])
    const commands = loaded.filter((m) => m.includes('/examples/tasks/dist/commands/'))
    expect(commands.map((m) => m.split('/commands/')[1])).toEqual(['list.js'])
  })
})
