import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { decodeMemo, encodeMemo } from '../../../src/describe/command-memo.js'
import { COMMAND_REFERENCE_FILE } from '../../../src/describe/command-reference-memo.js'
import { STORED_INPUT_EDITS, useToolCopy } from '../../support/copy.js'
import { ROOT, TASKS_BIN, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const copy = useToolCopy()
const MARK = 'stored by the build'

/** A tool's answer to `args`: exit 0, nothing on stderr, stdout without its duration and its own bin's path. */
function answer(bin: string, args: string[]): string {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env: box().env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  expect(result.status, result.stderr).toBe(0)
  expect(result.stderr).toBe('')
  return result.stdout.replace(/"duration_ms":\d+/, '"duration_ms":0').replaceAll(bin, '<bin>')
}

/** A copy of the example whose stored part for `list` says {@link MARK}, so a run shows whether it printed it. */
function marked(): string {
  const dir = copy('examples/tasks')
  const file = join(dir, COMMAND_REFERENCE_FILE)
  const { header, inputs, shared, entries } = decodeMemo(readFileSync(file, 'utf8'))
  const [line, entry] = entries.get('list')!
  entries.set('list', [line, { ...(entry as object), summary: MARK }])
  writeFileSync(
    file,
    encodeMemo(
      { file: COMMAND_REFERENCE_FILE, mark: 'agentcli_command_reference' },
      String(header.bundle_id),
      inputs,
      entries,
      {
        shared,
      },
    ),
  )
  return join(dir, 'bin/run.js')
}

describe("one command's reference from what the build stored", () => {
  it('is byte for byte what the reference built from oclif’s Config gives, for every visible command', () => {
    const text = readFileSync(join(ROOT, 'examples/tasks', COMMAND_REFERENCE_FILE), 'utf8')
    const ids = [...decodeMemo(text).entries.keys()]
    expect(ids.length).toBeGreaterThan(20)
    const without = copy('examples/tasks')
    rmSync(join(without, COMMAND_REFERENCE_FILE))
    for (const id of ids)
      expect(answer(TASKS_BIN, ['reference', ...id.split(':')]), id).toBe(
        answer(join(without, 'bin/run.js'), ['reference', ...id.split(':')]),
      )
  })

  it('is printed by the bundle it names for one path however spelt, and built for anything else', () => {
    const bin = marked()
    for (const args of [['list'], ['list', '--compact'], ['list:'], [' list ']])
      expect(answer(bin, ['reference', ...args]), args.join(' ')).toContain(MARK)
    for (const args of [['list', '--full'], ['list', 'get'], ['get']])
      expect(answer(bin, ['reference', ...args]), args.join(' ')).not.toContain(MARK)
  })

  it('is stale once package.json, the manifest or the descriptions changed', () => {
    for (const [what, edit] of STORED_INPUT_EDITS) {
      const bin = marked()
      edit(join(bin, '../..'))
      expect(answer(bin, ['reference', 'list']), what).not.toContain(MARK)
    }
  })
})
