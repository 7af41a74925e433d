import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DESCRIPTIONS_FILE } from '../../../src/describe/descriptions.js'
import { ROOT, seed, TASKS_BIN, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const EXAMPLE = join(ROOT, 'examples/tasks')

/** Every file a run of the example reads through node:fs, via a preloaded recorder. */
function filesReadBy(args: string[], extra: Record<string, string> = {}): string[] {
  const out = join(box().root, 'reads.txt')
  const result = spawnSync(
    process.execPath,
    ['--import', join(ROOT, 'test/fixtures/record-reads.mjs'), TASKS_BIN, ...args],
    { env: { PATH: process.env.PATH, ...box().env, ...extra, RECORD_READS_TO: out }, encoding: 'utf8' },
  )
  expect(result.status, result.stdout).toBe(0)
  return readFileSync(out, 'utf8').split('\n')
}

const readsDescriptions = (files: string[]) => files.some((f) => f.endsWith('agentcli.descriptions.json'))

describe('descriptions out of the start path', () => {
  it('the manifest holds no baked description, long text or example; the descriptions file does', () => {
    const manifest = JSON.parse(readFileSync(join(EXAMPLE, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, Record<string, unknown> & { flags: Record<string, Record<string, unknown>> }>
    }
    for (const [id, entry] of Object.entries(manifest.commands)) {
      expect(Object.keys(entry), id).not.toEqual(expect.arrayContaining(['agent']))
      expect(entry.description, id).toBeUndefined()
      expect(entry.examples, id).toBeUndefined()
      for (const flag of Object.values(entry.flags)) expect(flag.description, `${id} ${flag.name}`).toBeUndefined()
    }
    expect(existsSync(join(EXAMPLE, DESCRIPTIONS_FILE))).toBe(true)
    const lines = readFileSync(join(EXAMPLE, DESCRIPTIONS_FILE), 'utf8').trimEnd().split('\n')
    const header = JSON.parse(lines[0]!)
    expect(header).toMatchObject({ agentcli_descriptions: 1, shared_flags: { format: { name: 'format' } } })
    const list = lines.find((line) => line.startsWith('"list"\t'))!
    const moved = JSON.parse(list.slice(list.indexOf('\t') + 1))
    expect(moved.agent.path).toBe('list')
    expect(moved.description).toMatch(/ordered by id/)
    const status = moved.flags.status === 0 ? header.shared_flags.status : moved.flags.status
    expect(status.description).toBe('Only tasks with this status.')
    // The universal flags are written once, in the header; a command keeps their place.
    expect(moved.flags.format).toBe(0)
  })

  it('a normal run does not read the descriptions file; help and reference do', () => {
    seed(box(), [{ id: '1', title: 'a' }])
    // A command run reads the bundle, never the manifest nor the descriptions; `reference` and help read both.
    const list = filesReadBy(['list'])
    expect(list.some((f) => f.endsWith('bundle.cjs'))).toBe(true)
    expect(list.some((f) => f.endsWith('oclif.manifest.json'))).toBe(false)
    expect(readsDescriptions(list)).toBe(false)
    expect(readsDescriptions(filesReadBy(['get', '1']))).toBe(false)
    expect(readsDescriptions(filesReadBy(['edit', '1', '--status', 'done', '--dry-run']))).toBe(false)
    expect(readsDescriptions(filesReadBy(['reference']))).toBe(true)
    expect(readsDescriptions(filesReadBy(['list', '--help']))).toBe(true)
  })
})
