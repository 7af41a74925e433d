import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  BAKED_HELP_FILE,
  bakedHelp,
  decodeBakedHelp,
  encodeBakedHelp,
  plainHelpHere,
} from '../../../src/describe/baked-help.js'
import { DESCRIPTIONS_FILE, descriptionLine } from '../../../src/describe/descriptions.js'
import { isTerminal } from '../../../src/output/is-terminal.js'
import { useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'
import { useMemoRoots } from '../../support/memo-root.js'

const memoRoot = useMemoRoots()

const ID = '0123456789abcdef0123456789abcdef'
const PJSON = '{"name":"x","version":"1.0.0"}\n'
const MANIFEST = '{"commands":{\n"a":{}\n},"version":"1.0.0"}\n'
const DESCRIPTIONS = '{"agentcli_descriptions":1}\n"a"\t{"description":"long"}\n"b"\t{}\n'
const HELP = 'Do a — naïve ✓\n\nUSAGE\n  $ x a\n\n'
const lineOf = (id: string) => descriptionLine(Buffer.from(DESCRIPTIONS), id).line?.toString('utf8') ?? null

/** A tool root as the build leaves it: package.json, manifest, descriptions and the stored help of `a`, `b`, `c`. */
function tool(header: Record<string, unknown> = {}): string {
  const root = memoRoot({ pjson: PJSON, manifest: MANIFEST, descriptions: DESCRIPTIONS })
  const inputs = { pjson: PJSON, manifest: MANIFEST, descriptionsHeader: '{"agentcli_descriptions":1}' }
  const entry = (id: string, text: string) => [id, [lineOf(id), text]] as const
  const text = encodeBakedHelp(ID, inputs, new Map([entry('a', HELP), entry('b', 'B\n'), entry('c', 'C\n')]))
  writeFileSync(join(root, BAKED_HELP_FILE), withHeader(text, header))
  return root
}

/** The file's text with these fields set over its first line's (the body's offsets do not move). */
function withHeader(text: string, fields: Record<string, unknown>): string {
  const end = text.indexOf('\n')
  return `${JSON.stringify({ ...JSON.parse(text.slice(0, end)), ...fields })}${text.slice(end)}`
}

describe('the help the build stored', () => {
  it('is used by the bundle it names while every text it was rendered from is the same', () => {
    const root = tool()
    expect(bakedHelp(root, 'a', ID)).toBe(HELP)
    expect(bakedHelp(root, 'b', ID)).toBe('B\n')
    // `c` has no descriptions line, at build time and now.
    expect(bakedHelp(root, 'c', ID)).toBe('C\n')
  })

  it('is found among thousands of commands, its first line longer than one read', () => {
    const root = tool()
    const inputs = { pjson: PJSON, manifest: MANIFEST, descriptionsHeader: '{"agentcli_descriptions":1}' }
    const help = new Map<string, [string | null, string]>()
    for (let i = 0; i < 3000; i++) help.set(`topic-${i}:command-${i}`, [null, `help ${i} ✓\n`])
    help.set('a', [lineOf('a'), HELP])
    const text = encodeBakedHelp(ID, inputs, help)
    expect(text.indexOf('\n')).toBeGreaterThan(65536)
    writeFileSync(join(root, BAKED_HELP_FILE), text)
    expect(bakedHelp(root, 'a', ID)).toBe(HELP)
    expect(bakedHelp(root, 'topic-2999:command-2999', ID)).toBe('help 2999 ✓\n')
    expect(decodeBakedHelp(text).help).toEqual(help)
  })

  it('is not used from the modules, by another bundle, for a command it has not, or from another layout', () => {
    const root = tool()
    expect(bakedHelp(root, 'a')).toBeUndefined()
    expect(bakedHelp(root, 'a', 'f'.repeat(32))).toBeUndefined()
    expect(bakedHelp(root, 'z', ID)).toBeUndefined()
    const unicode = process.versions.unicode
    expect(bakedHelp(tool({ agentcli_help: 1 }), 'a', ID)).toBeUndefined()
    expect(bakedHelp(tool({ agentcli_help: 3, unicode }), 'a', ID)).toBeUndefined()
    // Rendered by a Node of another Unicode version (text widths may differ).
    expect(bakedHelp(tool({ unicode: '1.0' }), 'a', ID)).toBeUndefined()
    // `__proto__` and friends are not commands of any file.
    expect(bakedHelp(root, '__proto__', ID)).toBeUndefined()
    expect(bakedHelp(root, 'toString', ID)).toBeUndefined()
    const good = readFileSync(join(root, BAKED_HELP_FILE), 'utf8')
    expect(bakedHelp(root, 'a', ID)).toBe(HELP)
    // Cut short, without a first line, not JSON, or an offset past the end: oclif renders it.
    for (const text of [
      good.slice(0, good.indexOf('\n') + 20),
      good.slice(0, good.indexOf('\n')),
      '{"agentcli_help":2}',
      'not json\n[]\n',
      withHeader(good, { commands: { a: [10_000_000, 5] } }),
      withHeader(good, { inputs: [] }),
    ]) {
      writeFileSync(join(root, BAKED_HELP_FILE), text)
      expect(bakedHelp(root, 'a', ID), text.slice(0, 60)).toBeUndefined()
    }
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
  const stored = [
    ...decodeBakedHelp(readFileSync(join(import.meta.dirname, '../../../examples/tasks', BAKED_HELP_FILE), 'utf8'))
      .help,
  ].map(([id, [, text]]) => [id, text] as const)

  it('holds every command, each byte for byte what oclif renders for `<command> --help` and `-h`', async () => {
    expect(stored.length).toBeGreaterThan(20)
    for (const [id, text] of stored) {
      const words = id.split(':')
      for (const flag of ['--help', '-h']) {
        const run = await tasks(box(), [...words, flag])
        expect(run.code, `${id} ${flag}`).toBe(0)
        // oclif wraps to this worker's terminal when it has one: the stored text is then not printed at all.
        if (plainHelpHere(isTerminal(1))) expect(run.stdout, `${id} ${flag}`).toBe(text)
      }
    }
  })
})
