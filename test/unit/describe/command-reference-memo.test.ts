import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CommandDescription } from '../../../src/describe/command.js'
import { decodeMemo } from '../../../src/describe/command-memo.js'
import {
  COMMAND_REFERENCE_FILE,
  encodeCommandReferences,
  storedCommandReference,
} from '../../../src/describe/command-reference-memo.js'
import { commandReference } from '../../../src/describe/compact.js'
import { DESCRIPTIONS_FILE } from '../../../src/describe/descriptions.js'
import type { Reference } from '../../../src/describe/reference.js'
import { useSandbox } from '../../support/helpers.js'
import { TASKS_ROOT, tasksInProcess as tasks } from '../../support/in-process.js'
import { useMemoRoots } from '../../support/memo-root.js'

const memoRoot = useMemoRoots()

const ID = '0123456789abcdef0123456789abcdef'
const PJSON = '{"name":"x","version":"1.0.0"}\n'
const MANIFEST = '{"commands":{\n"a":{},"job:list":{}\n},"version":"1.0.0"}\n'
const DESCRIPTIONS = '{"agentcli_descriptions":1}\n"a"\t{"description":"long ✓"}\n"job:list"\t{}\n'

const command = (path: string) => ({ path, summary: `${path} ✓` }) as unknown as CommandDescription
const FULL = {
  tool: 'x',
  version: '1.0.0',
  commands: [command('a'), command('job list')],
  exit_codes: { 0: 'ok' },
} as unknown as Reference

/** A tool root as the build leaves it, with the stored parts of `FULL`. */
function tool(): string {
  const root = memoRoot({ pjson: PJSON, manifest: MANIFEST, descriptions: DESCRIPTIONS })
  const inputs = { pjson: PJSON, manifest: MANIFEST, descriptionsHeader: '{"agentcli_descriptions":1}' }
  writeFileSync(
    join(root, COMMAND_REFERENCE_FILE),
    encodeCommandReferences(ID, inputs, FULL, Buffer.from(DESCRIPTIONS)),
  )
  return root
}

describe("one command's part of the reference, as the build stored it", () => {
  it('is the full reference with that command alone, its keys in their order, however the path is spelt', () => {
    const root = tool()
    const one = { ...FULL, commands: [command('job list')] }
    for (const words of [['job', 'list'], ['job:list'], ['job list'], [' job ', ':list']]) {
      const stored = storedCommandReference(root, words, ID)
      expect(stored, words.join('|')).toEqual(one)
      expect(JSON.stringify(stored)).toBe(JSON.stringify(one))
    }
    expect(storedCommandReference(root, ['a'], ID)).toEqual({ ...FULL, commands: [command('a')] })
  })

  it('is not used for several paths, none, a command it has not, another bundle or the modules', () => {
    const root = tool()
    for (const words of [['a', 'job', 'list'], ['job'], [], [':'], ['b'], ['__proto__'], ['toString']])
      expect(storedCommandReference(root, words, ID), words.join('|')).toBeUndefined()
    expect(storedCommandReference(root, ['a'], 'f'.repeat(32))).toBeUndefined()
    expect(storedCommandReference(root, ['a'])).toBeUndefined()
  })

  it('is stale once package.json, the manifest or the command’s descriptions changed', () => {
    const edits: [string, (text: string) => string][] = [
      ['package.json', (t) => t.replace('1.0.0', '1.0.1')],
      ['oclif.manifest.json', (t) => t.replace('"a":{}', '"a":{"hidden":true}')],
      [DESCRIPTIONS_FILE, (t) => t.replace('long', 'longer')],
      [DESCRIPTIONS_FILE, (t) => t.replace('{"agentcli_descriptions":1}', '{"agentcli_descriptions":1,"x":1}')],
    ]
    for (const [file, edit] of edits) {
      const root = tool()
      writeFileSync(join(root, file), edit(readFileSync(join(root, file), 'utf8')))
      expect(storedCommandReference(root, ['a'], ID), file).toBeUndefined()
    }
    // Another command's line is not what `a`'s part came from.
    const root = tool()
    writeFileSync(join(root, DESCRIPTIONS_FILE), DESCRIPTIONS.replace('"job:list"\t{}', '"job:list"\t{"x":1}'))
    expect(storedCommandReference(root, ['a'], ID)).toEqual({ ...FULL, commands: [command('a')] })
    expect(storedCommandReference(root, ['job', 'list'], ID)).toBeUndefined()
  })
})

describe("the example's stored command references", () => {
  const box = useSandbox()
  const text = readFileSync(join(TASKS_ROOT, COMMAND_REFERENCE_FILE), 'utf8')
  const bundle = String(decodeMemo(text).header.bundle_id)
  const ids = [...decodeMemo(text).entries.keys()]

  it('hold every visible command, each what `reference <path>` builds from oclif’s Config', async () => {
    expect(ids).toContain('job:list')
    expect(ids).not.toContain('login:approve')
    for (const id of ids) {
      const run = await tasks(box(), ['reference', ...id.split(':')])
      expect(run.code, id).toBe(0)
      const data = (run.json as { data: { full_reference: string } }).data
      const stored = storedCommandReference(TASKS_ROOT, id.split(':'), bundle)
      expect(stored, id).toBeDefined()
      expect(JSON.stringify(commandReference(stored!, data.full_reference)), id).toBe(JSON.stringify(data))
    }
  })
})
