import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BAKED_HELP_FILE, decodeBakedHelp, encodeBakedHelp } from '../../../src/describe/baked-help.js'
import { STORED_INPUT_EDITS, useToolCopy } from '../../support/copy.js'
import { ROOT, TASKS_BIN, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const copy = useToolCopy()

/** A tool's help for `args`, stdout a pipe; exit 0 and nothing on stderr. */
function help(bin: string, args: string[], env: Record<string, string> = {}): string {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env: { ...box().env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  expect(result.status, result.stderr).toBe(0)
  expect(result.stderr).toBe('')
  return result.stdout
}

/** The stored file with the texts of `ids` replaced by a marker, so a run shows which one it printed. */
function marked(dir: string, ids = ['list']): void {
  const file = join(dir, BAKED_HELP_FILE)
  const { header, inputs, help: texts } = decodeBakedHelp(readFileSync(file, 'utf8'))
  for (const id of ids) {
    const [line] = texts.get(id)!
    texts.set(id, [line, 'stored by the build\n'])
  }
  writeFileSync(file, encodeBakedHelp(String(header.bundle_id), inputs, texts))
}

describe('the help computed at build time', () => {
  it('holds every command, and prints byte for byte what oclif prints without it', () => {
    const { header, help: stored } = decodeBakedHelp(
      readFileSync(join(ROOT, 'examples/tasks', BAKED_HELP_FILE), 'utf8'),
    )
    const bundle = readFileSync(join(ROOT, 'examples/tasks/dist/bundle.cjs'), 'latin1')
    const id = /var __agentcli_bundle_id = "([0-9a-f]{32})";/.exec(bundle.slice(0, bundle.indexOf('\n')))?.[1]
    expect(header).toMatchObject({ agentcli_help: 2, bundle_id: id, unicode: process.versions.unicode })
    const ids = [...stored.keys()]
    expect(ids).toContain('job:list')
    const without = copy('examples/tasks')
    rmSync(join(without, BAKED_HELP_FILE))
    for (const command of ids) {
      const words = command.split(':')
      expect(help(TASKS_BIN, [...words, '--help']), command).toBe(
        help(join(without, 'bin/run.js'), [...words, '--help']),
      )
    }
    expect(help(TASKS_BIN, ['list', '-h'])).toBe(help(join(without, 'bin/run.js'), ['list', '-h']))
  })

  it('is printed by the bundle it names off a terminal, and oclif renders help wherever it could differ', () => {
    const dir = copy('examples/tasks')
    marked(dir, ['list', 'job:list'])
    const bin = join(dir, 'bin/run.js')
    expect(help(bin, ['list', '--help'])).toBe('stored by the build\n')
    expect(help(bin, ['list', '-h', '--help'])).toBe('stored by the build\n')
    expect(help(bin, ['job', 'list', '--help'])).toBe('stored by the build\n')
    // The id as one word is not what the build rendered: oclif's help.
    expect(help(bin, ['job:list', '--help'])).not.toBe('stored by the build\n')
    // A width or colour of the caller's, another argument, `help <command>`: oclif's own rendering.
    for (const [args, env] of [
      [['list', '--help'], { OCLIF_COLUMNS: '80' }],
      [['list', '--help'], { FORCE_COLOR: '0' }],
      [['list', '--help', '--status', 'open'], {}],
      [['help', 'list'], {}],
      // Words after the command are its arguments, not more of its id: its help, never E_INTERNAL.
      [['list', 'extra', '--help'], {}],
      [['list', '--help', 'extra'], {}],
    ] as const)
      expect(help(bin, [...args], env), args.join(' ')).toContain('USAGE\n  $ tasks list')
  })

  it('is stale, and oclif renders help, once the package.json, the manifest or the descriptions changed', () => {
    for (const [what, edit] of STORED_INPUT_EDITS) {
      const dir = copy('examples/tasks')
      marked(dir)
      edit(dir)
      const text = help(join(dir, 'bin/run.js'), ['list', '--help'])
      expect(text, what).toContain('USAGE\n  $ tasks list')
      if (what === 'descriptions') expect(text).toContain('Tasks in id order')
    }
  })

  it('is not used by another build of the bundle (another id)', () => {
    const dir = copy('examples/tasks')
    marked(dir)
    const file = join(dir, BAKED_HELP_FILE)
    const { inputs, help: texts } = decodeBakedHelp(readFileSync(file, 'utf8'))
    writeFileSync(file, encodeBakedHelp('f'.repeat(32), inputs, texts))
    expect(help(join(dir, 'bin/run.js'), ['list', '--help'])).toContain('USAGE\n  $ tasks list')
  })
})
