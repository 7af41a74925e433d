import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, useSandbox } from '../../support/helpers.js'

// A tool with more commands than CHUNK_FROM (src/build/fast-chunks.ts): each fast route's command module is a
// chunk of its own, loaded by the fast bundle, and each self-contained one (items 20 on, which import no module of
// the tool) a chunk of the main bundle too; the answers must stay those of oclif's path, from its bundle.
const COMMANDS = 40
const box = useSandbox()
let dir: string
let bin: string

function command(i: number): string {
  // import.meta.url is the bundle's, as for a module the bundle holds, from a chunk too.
  const label =
    i < 20
      ? "import { label } from '../lib.js'"
      : "const label = (name) => name ?? (/\\/dist\\/$/.test(new URL('.', import.meta.url).pathname) ? 'item' : 'misplaced')"
  return `import { AgentCommand, Flags, output } from 'agentcli'
${label}

export default class Command${i} extends AgentCommand {
  static summary = 'Show item ${i}'
  static description = 'Reads item ${i} and reports its id, name and count.'
  static kind = 'read'
  static flags = {
    name: Flags.string({ description: 'Only the item with this name.' }),
    limit: Flags.integer({ description: 'Items per page (1-100).', default: 10, min: 1, max: 100 }),
  }
  static output = output((z) => z.object({ id: z.string(), name: z.string(), count: z.number().int() }))
  async execute() {
    const { flags } = await this.parse(Command${i})
    return { id: '${i}', name: label(flags.name), count: flags.limit }
  }
}
`
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentcli-chunks-'))
  mkdirSync(join(dir, 'dist', 'commands'), { recursive: true })
  mkdirSync(join(dir, 'bin'))
  mkdirSync(join(dir, 'node_modules', '@oclif'), { recursive: true })
  mkdirSync(join(dir, 'node_modules', '@agentcli'))
  symlinkSync(ROOT, join(dir, 'node_modules', 'agentcli'))
  symlinkSync(join(ROOT, 'node_modules', '@oclif', 'core'), join(dir, 'node_modules', '@oclif', 'core'))
  symlinkSync(join(ROOT, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'))
  symlinkSync(join(ROOT, 'plugins', 'builtins'), join(dir, 'node_modules', '@agentcli', 'plugin-builtins'))
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'chunked',
      version: '0.1.0',
      type: 'module',
      oclif: {
        bin: 'chunked',
        dirname: 'agentcli-chunked-test',
        commands: { strategy: 'explicit', target: './dist/index.js', identifier: 'COMMANDS' },
        topicSeparator: ' ',
      },
      agentcli: { bundle: true },
    }),
  )
  writeFileSync(
    join(dir, 'bin', 'run.js'),
    "#!/usr/bin/env node\nconst { start } = await import('agentcli/boot')\nawait start(new URL('..', import.meta.url))\n",
  )
  writeFileSync(join(dir, 'dist', 'lib.js'), "export const label = (name) => name ?? 'item'\n")
  const imports: string[] = []
  const entries: string[] = []
  for (let i = 0; i < COMMANDS; i++) {
    writeFileSync(join(dir, 'dist', 'commands', `item${i}.js`), command(i))
    imports.push(`import Item${i} from './commands/item${i}.js'`)
    entries.push(`  item${i}: Item${i},`)
  }
  writeFileSync(
    join(dir, 'dist', 'index.js'),
    `import { COMMANDS as BUILTINS } from '@agentcli/plugin-builtins'\n${imports.join('\n')}\nexport const COMMANDS = {\n  ...BUILTINS,\n${entries.join('\n')}\n}\n`,
  )
  const built = spawnSync(process.execPath, [join(ROOT, 'bin', 'agentcli-build.js'), '--no-changelog', dir], {
    encoding: 'utf8',
  })
  expect(built.status, built.stderr).toBe(0)
  bin = join(dir, 'bin', 'run.js')
}, 120_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

const stable = (stdout: string) => stdout.replace(/"duration_ms": ?\d+/g, '"duration_ms":0')

describe('a tool with many fast routes', () => {
  it('gets one chunk per route, and a fast bundle without the command modules', () => {
    expect(readdirSync(join(dir, 'dist', 'fast-chunks')).length).toBe(COMMANDS)
    const fast = readFileSync(join(dir, 'dist', 'fast.cjs'), 'utf8')
    expect(fast.includes('Reads item 7 and reports')).toBe(false)
    expect(fast.includes('get "item7"') || fast.includes('get"item7"')).toBe(true)
  })

  function traced(args: string[], env: Record<string, string> = {}) {
    const scripts = join(box().root, 'scripts.txt')
    const result = spawnSync(
      process.execPath,
      ['--import', join(ROOT, 'test/fixtures/record-scripts.mjs'), bin, ...args],
      {
        env: { PATH: process.env.PATH, ...box().env, ...env, RECORD_SCRIPTS_TO: scripts },
        encoding: 'utf8',
      },
    )
    expect(result.status, result.stderr).toBe(0)
    const compiled = readFileSync(scripts, 'utf8').split('\n').filter(Boolean)
    return { data: JSON.parse(result.stdout).data, compiled: compiled.map((f) => f.replace(/.*\/dist\//, '')) }
  }

  it('gives the main bundle a chunk of each self-contained command, and keeps the others in it', () => {
    expect(readdirSync(join(dir, 'dist', 'chunks')).length).toBe(COMMANDS - 20)
    const oclif = { AGENTCLI_FAST: '0' }
    const own = traced(['item30', '--limit', '4'], oclif)
    expect(own.data).toEqual({ id: '30', name: 'item', count: 4 })
    expect(own.compiled).toEqual(['bundle.cjs', expect.stringMatching(/^chunks\/\d+\.cjs$/)])
    const shared = traced(['item7', '--name', 'y'], oclif)
    expect(shared.data).toEqual({ id: '7', name: 'y', count: 10 })
    expect(shared.compiled).toEqual(['bundle.cjs'])
  })

  it('runs a route from its chunk, without oclif’s bundle', () => {
    const run = traced(['item7', '--name', 'x', '--limit', '3'])
    expect(run.data).toEqual({ id: '7', name: 'x', count: 3 })
    const compiled = run.compiled
    expect(traced(['item30']).data).toEqual({ id: '30', name: 'item', count: 10 })
    expect(compiled).toEqual(['fast.cjs', expect.stringMatching(/^fast-chunks\/\d+\.cjs$/)])
  })

  it('answers as oclif’s path does, byte for byte', async () => {
    for (const args of [
      ['item0'],
      ['item25', '--limit', '3'],
      ['item39', '--limit', '2', '--name', 'a'],
      ['item5', '--limit', '0'],
      ['item5', '--bogus'],
      ['item5', 'stray'],
      ['item12', '--format', 'text'],
      ['item12', '--fields', 'id,count'],
      ['--format', 'text', 'item3'],
    ]) {
      const [fast, normal] = await Promise.all([
        runTool(bin, args, { env: box().env }),
        runTool(bin, args, { env: { ...box().env, AGENTCLI_FAST: '0' } }),
      ])
      expect(stable(fast.stdout), args.join(' ')).toBe(stable(normal.stdout))
      expect(fast.code, args.join(' ')).toBe(normal.code)
    }
  })
})
