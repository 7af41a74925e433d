import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BAKED_COMPACT_FILE } from '../../../src/describe/baked-compact.js'
import { DESCRIPTIONS_FILE } from '../../../src/describe/descriptions.js'
import { editJson, useToolCopy } from '../../support/copy.js'
import { ROOT, seed, TASKS_BIN, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const copy = useToolCopy()

/** The full `reference` of a tool's bin, as one line of JSON (its data). */
function fullReference(bin: string): string {
  const result = spawnSync(process.execPath, [bin, 'reference', '--format', 'json'], {
    env: box().env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  expect(result.status, result.stderr).toBe(0)
  return JSON.stringify(JSON.parse(result.stdout).data)
}

/** `reference --compact` of a tool's bin, its envelope without the run's duration. */
function compact(bin: string): string {
  seed(box(), [{ id: '1', title: 'a' }])
  const result = spawnSync(process.execPath, [bin, 'reference', '--compact'], {
    env: box().env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.replace(/"duration_ms":\d+/, '"duration_ms":0')
}

describe('the compact reference computed at build time', () => {
  it('prints byte for byte what compacting at run time prints', () => {
    const bundle = readFileSync(join(ROOT, 'examples/tasks/dist/bundle.cjs'), 'latin1')
    const id = /var __agentcli_bundle_id = "([0-9a-f]{32})";/.exec(bundle.slice(0, bundle.indexOf('\n')))?.[1]
    const baked = readFileSync(join(ROOT, 'examples/tasks', BAKED_COMPACT_FILE), 'utf8').split('\n')
    // The redactor changed nothing in the stored form, with no secret and no declared key: a run under those skips it.
    const redaction_clean = { keys: '[]', bytes: Buffer.byteLength(baked[2]!) }
    expect(JSON.parse(baked[0]!)).toEqual({ agentcli_compact_reference: 1, bundle_id: id, redaction_clean })
    // The probe run answered with the stored form: the texts it was answered from are recorded, and the full
    // reference's line is left empty (the command memo holds its parts).
    expect((JSON.parse(baked[3]!) as string[]).length).toBe(3)
    expect(baked[1]).toBe('')
    const without = copy('examples/tasks')
    rmSync(join(without, BAKED_COMPACT_FILE))
    expect(compact(TASKS_BIN)).toBe(compact(join(without, 'bin/run.js')))
  })

  it('is what a run of the bundle it names prints, and only while the reference is the one it was computed from', () => {
    const dir = copy('examples/tasks')
    const file = join(dir, BAKED_COMPACT_FILE)
    const lines = readFileSync(file, 'utf8').split('\n')
    const bin = join(dir, 'bin/run.js')
    // Without inputs, as a tool with plugins or hooks has it: the full reference it was computed from, and a stored
    // form no compaction would give, which shows which one was printed.
    const full = fullReference(bin)
    writeFileSync(file, [lines[0], full, JSON.stringify({ compact: true, stored: 'by the build' }), ''].join('\n'))
    expect(JSON.parse(compact(bin)).data).toEqual({ compact: true, stored: 'by the build' })
    // Another description: another reference, compacted at run time.
    editJson(join(dir, 'package.json'), (p) => {
      p.description = 'Another description.'
    })
    const fresh = JSON.parse(compact(bin)).data as { description: string; commands: unknown[] }
    expect(fresh.description).toBe('Another description.')
    expect(fresh.commands.length).toBeGreaterThan(10)
  })

  it('is not used by another build of the bundle (another id)', () => {
    const dir = copy('examples/tasks')
    const file = join(dir, BAKED_COMPACT_FILE)
    const header = JSON.stringify({ agentcli_compact_reference: 1, bundle_id: 'f'.repeat(32) })
    const full = fullReference(join(dir, 'bin/run.js'))
    writeFileSync(file, [header, full, JSON.stringify({ compact: true, stored: 'by the build' }), ''].join('\n'))
    const data = JSON.parse(compact(join(dir, 'bin/run.js'))).data as { stored?: string; commands: unknown[] }
    expect(data.stored).toBeUndefined()
    expect(data.commands.length).toBeGreaterThan(10)
  })
})

describe('the compact reference stored with its inputs', () => {
  it('is printed without building the reference, and only while package.json, manifest and descriptions are the same', () => {
    const dir = copy('examples/tasks')
    const file = join(dir, BAKED_COMPACT_FILE)
    const lines = readFileSync(file, 'utf8').split('\n')
    // A stored full reference no run builds and a stand-in compact form: printed only if nothing was built.
    const stand = JSON.stringify({ compact: true, stored: 'with its inputs' })
    // The inputs' lengths and bytes (the fourth line and what follows it) kept as they are.
    writeFileSync(file, [lines[0], '{}', stand, ...lines.slice(3)].join('\n'))
    const bin = join(dir, 'bin/run.js')
    expect(JSON.parse(compact(bin)).data).toEqual({ compact: true, stored: 'with its inputs' })
    const descriptions = join(dir, DESCRIPTIONS_FILE)
    writeFileSync(descriptions, readFileSync(descriptions, 'utf8').replaceAll('List tasks', 'List the tasks'))
    const fresh = JSON.parse(compact(bin)).data as { stored?: string; commands: unknown[] }
    expect(fresh.stored).toBeUndefined()
    expect(JSON.stringify(fresh)).toContain('List the tasks')
  })
})
