import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BAKED_HELP_FILE, bakedHelp, descriptionLines, plainHelpHere } from '../../../src/describe/baked-help.js'
import { DESCRIPTIONS_FILE } from '../../../src/describe/descriptions.js'
import { isTerminal } from '../../../src/output/is-terminal.js'
import { useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const ID = '0123456789abcdef0123456789abcdef'
const PJSON = '{"name":"x","version":"1.0.0"}\n'
const MANIFEST = '{"commands":{\n"a":{}\n},"version":"1.0.0"}\n'
const DESCRIPTIONS = '{"agentcli_descriptions":1}\n"a"\t{"description":"long"}\n"b"\t{}\n'
const HELP = 'Do a\n\nUSAGE\n  $ x a\n\n'

/** A tool root as the build leaves it: package.json, manifest, descriptions and the stored help of `a`. */
function tool(
  header: Record<string, unknown> = { agentcli_help: 1, bundle_id: ID, unicode: process.versions.unicode },
): string {
  const root = mkdtempSync(join(tmpdir(), 'agentcli-baked-help-'))
  made.push(root)
  mkdirSync(join(root, 'dist'))
  writeFileSync(join(root, 'package.json'), PJSON)
  writeFileSync(join(root, 'oclif.manifest.json'), MANIFEST)
  writeFileSync(join(root, DESCRIPTIONS_FILE), DESCRIPTIONS)
  const inputs = JSON.stringify([PJSON, MANIFEST, '{"agentcli_descriptions":1}'])
  const line = (id: string, text: string) =>
    `${JSON.stringify(id)}\t${JSON.stringify([descriptionLines(DESCRIPTIONS, id).line ?? null, text])}`
  writeFileSync(
    join(root, BAKED_HELP_FILE),
    `${JSON.stringify(header)}\n${inputs}\n${line('a', HELP)}\n${line('b', 'B\n')}\n${line('c', 'C\n')}\n`,
  )
  return root
}

describe('the help the build stored', () => {
  it('is used by the bundle it names while every text it was rendered from is the same', () => {
    const root = tool()
    expect(bakedHelp(root, 'a', ID)).toBe(HELP)
    expect(bakedHelp(root, 'b', ID)).toBe('B\n')
    // `c` has no descriptions line, at build time and now.
    expect(bakedHelp(root, 'c', ID)).toBe('C\n')
  })

  it('is not used from the modules, by another bundle, for a command it has not, or from another layout', () => {
    const root = tool()
    expect(bakedHelp(root, 'a')).toBeUndefined()
    expect(bakedHelp(root, 'a', 'f'.repeat(32))).toBeUndefined()
    expect(bakedHelp(root, 'z', ID)).toBeUndefined()
    const unicode = process.versions.unicode
    expect(bakedHelp(tool({ agentcli_help: 2, bundle_id: ID, unicode }), 'a', ID)).toBeUndefined()
    // Rendered by a Node of another Unicode version (text widths may differ).
    expect(bakedHelp(tool({ agentcli_help: 1, bundle_id: ID, unicode: '1.0' }), 'a', ID)).toBeUndefined()
    writeFileSync(join(root, BAKED_HELP_FILE), '{"agentcli_help":1}')
    expect(bakedHelp(root, 'a', ID)).toBeUndefined()
    writeFileSync(join(root, BAKED_HELP_FILE), 'not json\n[]\n')
    expect(bakedHelp(root, 'a', ID)).toBeUndefined()
    rmSync(join(root, BAKED_HELP_FILE))
    expect(bakedHelp(root, 'a', ID)).toBeUndefined()
  })

  it('is stale once package.json, the manifest or the command’s descriptions changed (oclif renders it then)', () => {
    const edits: [string, (text: string) => string][] = [
      ['package.json', (t) => t.replace('1.0.0', '1.0.1')],
      ['oclif.manifest.json', (t) => t.replace('"a":{}', '"a":{"hidden":true}')],
      [DESCRIPTIONS_FILE, (t) => t.replace('long', 'longer')],
      [DESCRIPTIONS_FILE, (t) => t.replace('{"agentcli_descriptions":1}', '{"agentcli_descriptions":1,"x":1}')],
      [DESCRIPTIONS_FILE, (t) => t.replace('"a"\t{"description":"long"}\n', '')],
    ]
    for (const [file, edit] of edits) {
      const root = tool()
      writeFileSync(join(root, file), edit(readFileSync(join(root, file), 'utf8')))
      expect(bakedHelp(root, 'a', ID), file).toBeUndefined()
    }
    // Another command's line is not what `a`'s help was rendered from.
    const root = tool()
    writeFileSync(join(root, DESCRIPTIONS_FILE), DESCRIPTIONS.replace('"b"\t{}', '"b"\t{"description":"new"}'))
    expect(bakedHelp(root, 'a', ID)).toBe(HELP)
    expect(bakedHelp(root, 'b', ID)).toBeUndefined()
    rmSync(join(root, DESCRIPTIONS_FILE))
    expect(bakedHelp(root, 'a', ID)).toBeUndefined()
  })

  it('is printed only where oclif would print plain text at 80 columns', () => {
    const env = { ...process.env }
    const argv = [...process.argv]
    const settings = globalThis as { oclif?: { columns?: number } }
    const columns = settings.oclif?.columns
    try {
      delete process.env.OCLIF_COLUMNS
      delete process.env.FORCE_COLOR
      expect(plainHelpHere(false)).toBe(true)
      expect(plainHelpHere(true)).toBe(false)
      process.env.OCLIF_COLUMNS = '80'
      expect(plainHelpHere(false)).toBe(false)
      delete process.env.OCLIF_COLUMNS
      process.env.FORCE_COLOR = '0'
      expect(plainHelpHere(false)).toBe(false)
      delete process.env.FORCE_COLOR
      process.argv.push('--color=256')
      expect(plainHelpHere(false)).toBe(false)
      process.argv.pop()
      settings.oclif = { ...settings.oclif, columns: 100 }
      expect(plainHelpHere(false)).toBe(false)
    } finally {
      process.env = env
      process.argv.splice(0, process.argv.length, ...argv)
      if (settings.oclif) {
        if (columns === undefined) delete settings.oclif.columns
        else settings.oclif.columns = columns
      }
    }
  })
})

describe("the example's stored help", () => {
  const box = useSandbox()
  const stored = readFileSync(join(import.meta.dirname, '../../../examples/tasks', BAKED_HELP_FILE), 'utf8')
    .split('\n')
    .slice(2)
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t')
      return [JSON.parse(line.slice(0, tab)) as string, (JSON.parse(line.slice(tab + 1)) as [unknown, string])[1]]
    })

  it('holds every command, each byte for byte what oclif renders for `<command> --help` and `-h`', async () => {
    expect(stored.length).toBeGreaterThan(20)
    for (const [id, text] of stored) {
      const words = id!.split(':')
      for (const flag of ['--help', '-h']) {
        const run = await tasks(box(), [...words, flag])
        expect(run.code, `${id} ${flag}`).toBe(0)
        // oclif wraps to this worker's terminal when it has one: the stored text is then not printed at all.
        if (plainHelpHere(isTerminal(1))) expect(run.stdout, `${id} ${flag}`).toBe(text)
      }
    }
  })
})
