import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { editJson, useToolCopy } from '../../support/copy.js'
import { TASKS_BIN, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const copy = useToolCopy()

/** What a tool's bin answers to `args`: exit code, stdout without its duration, stderr. */
function answer(bin: string, args: string[]): [number | null, string, string] {
  const result = spawnSync(process.execPath, [bin, ...args], { env: box().env, encoding: 'utf8' })
  return [result.status, result.stdout.replace(/"duration_ms": ?\d+/g, '"duration_ms":0'), result.stderr]
}

describe('words that name no command: answered from the map, as oclif’s Config answers them', () => {
  it('byte for byte what the same tool answers through oclif’s Config (a no-op init hook sends it there)', () => {
    const viaConfig = copy('examples/tasks', (dir) => {
      writeFileSync(join(dir, 'noop-hook.js'), 'export default async function () {}\n')
      editJson(join(dir, 'package.json'), (p) => {
        ;(p.oclif as Record<string, unknown>).hooks = { init: './noop-hook.js' }
      })
    })
    const cases = [
      ['nope'],
      ['lst'],
      ['job'],
      ['job', 'lst'],
      ['job', 'stat'],
      ['reference2', '--limit', '3'],
      ['lst', '--bogus'],
      ['--pretty', 'nope'],
      ['nope', '--format', 'text'],
      ['nope', '--format=yaml'],
      ['x', 'y', 'z'],
      ['job', 'worker2'],
      ['logn'],
      ['nope', '--', 'x'],
    ]
    for (const args of cases) {
      const own = answer(TASKS_BIN, args)
      expect(own[0], args.join(' ')).not.toBe(0)
      expect(own, args.join(' ')).toEqual(answer(join(viaConfig, 'bin/run.js'), args))
    }
  }, 120_000)
})
