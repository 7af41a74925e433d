import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type NoRoute, ownRoute, readPjson } from '../../../src/runtime/own-commands.js'
import { toolConfig } from '../../../src/runtime/tool-config.js'

// An in-process caller (an MCP server's reads) runs many times in one process: package.json is read and parsed
// once while it is unchanged on disk, and an edit is seen by the next run, as a new process would see it.
describe('readPjson for many runs of one process', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const tool = (pjson: Record<string, unknown>) => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-pjson-'))
    dirs.push(dir)
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pjson))
    return dir
  }

  it('shares what an unchanged file parsed to, and sees an edit at the next run', () => {
    const dir = tool({ name: 'a', version: '1.0.0', oclif: { bin: 'a' } })
    const first = readPjson(dir, undefined, true)
    expect(readPjson(dir, undefined, true).pjson).toBe(first.pjson)
    // A longer text: its stat differs whatever the file system's clock resolution.
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'a', version: '2.0.0-edited', oclif: { bin: 'a' } }),
    )
    const edited = readPjson(dir, undefined, true)
    expect(edited.pjson.version).toBe('2.0.0-edited')
    expect(edited.pjson).not.toBe(first.pjson)
  })

  it('parses its own copy for each run without reuse, and keeps a bundle target apart', () => {
    const dir = tool({ name: 'b', version: '1.0.0', oclif: { bin: 'b', commands: './dist/index.js' } })
    expect(readPjson(dir, undefined).pjson).not.toBe(readPjson(dir, undefined).pjson)
    const plain = readPjson(dir, undefined, true).pjson
    const bundled = readPjson(dir, join(dir, 'dist', 'bundle.cjs'), true).pjson
    expect(bundled.oclif?.commands).toEqual({
      strategy: 'explicit',
      target: './dist/bundle.cjs',
      identifier: 'default',
    })
    expect(plain.oclif?.commands).toBe('./dist/index.js')
  })
})

// Words that name no command, in a tool whose map is every command it has: answered from the map (the visible ids
// in its order), so the router's E_USAGE needs no oclif Config; anything the map cannot settle goes to oclif.
describe('ownRoute for words that name nothing', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const TASKS = join(import.meta.dirname, '../../../examples/tasks')
  const tasks = () => {
    const { dir, pjson } = readPjson(TASKS, undefined)
    return toolConfig(dir, pjson)
  }

  it('from the modules: the visible commands, hidden ones (job worker, login approve) left out', async () => {
    const route = await ownRoute(tasks(), ['nope', '--limit', '3'])
    expect(route && 'unknown' in route).toBe(true)
    const names = (route as NoRoute).unknown
    expect(names).toContain('list')
    expect(names).toContain('job status')
    expect(names).not.toContain('job worker')
    expect(names).not.toContain('login approve')
    expect(names).toEqual([...new Set(names)])
  })

  it('a command, a topic with a command under it, and `help` are not answered here', async () => {
    // (Here the classes extend the built framework's base, not this source's: a match is left to oclif too.)
    const unknown = async (argv: string[]) => {
      const route = await ownRoute(tasks(), argv)
      return route !== undefined && 'unknown' in route
    }
    expect(await unknown(['list'])).toBe(false)
    expect(await unknown(['job', 'list', 'x'])).toBe(false)
    expect(await ownRoute(tasks(), ['help', 'list'])).toBeUndefined()
    // A topic alone names no command: the router's E_USAGE says it is a topic (unknownCommand).
    expect(await ownRoute(tasks(), ['job'])).toHaveProperty('unknown')
  })

  it('a bundle built before the hidden ids were listed: unknown words go to oclif', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-old-bundle-'))
    dirs.push(dir)
    const bundle = join(dir, 'bundle.cjs')
    writeFileSync(bundle, 'exports.COMMANDS = { list: class {} }\nexports.AGENTCLI_ALIASES = []\n')
    const pjson = {
      name: 'old',
      version: '1.0.0',
      oclif: { bin: 'old', commands: { strategy: 'explicit', target: './bundle.cjs', identifier: 'COMMANDS' } },
    }
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pjson))
    const config = toolConfig(dir, pjson as never)
    expect(await ownRoute(config, ['nope'], bundle)).toBeUndefined()
    writeFileSync(bundle, 'exports.COMMANDS = { list: class {} }\nexports.AGENTCLI_HIDDEN = []\n')
    const fresh = join(dir, 'fresh.cjs')
    writeFileSync(fresh, 'exports.COMMANDS = { list: class {} }\nexports.AGENTCLI_HIDDEN = ["list"]\n')
    const listed = toolConfig(dir, {
      ...pjson,
      oclif: { ...pjson.oclif, commands: { ...pjson.oclif.commands, target: './fresh.cjs' } },
    } as never)
    expect(await ownRoute(listed, ['nope'], fresh)).toEqual({ unknown: [] })
  })

  it('a tool with hooks or plugins: everything goes to oclif', async () => {
    const config = tasks()
    const hooked = {
      ...config,
      pjson: { ...config.pjson, oclif: { ...config.pjson.oclif, hooks: { init: './x.js' } } },
    }
    expect(await ownRoute(hooked as never, ['nope'])).toBeUndefined()
    const plugged = { ...config, pjson: { ...config.pjson, oclif: { ...config.pjson.oclif, plugins: ['p'] } } }
    expect(await ownRoute(plugged as never, ['nope'])).toBeUndefined()
  })
})
