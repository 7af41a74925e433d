import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, useSandbox } from '../../support/helpers.js'
import { runInProcess } from '../../support/in-process.js'

// A tool with more commands than CHUNK_FROM (src/build/bundle-chunks.ts): each self-contained command module
// (items 20 on, which import no module of the tool) is a chunk of its own beside the bundle, evaluated only when
// its command runs; the answers must stay those the tool gives from its modules.
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
  symlinkSync(ROOT, join(dir, 'node_modules', 'agentcli'))
  symlinkSync(join(ROOT, 'node_modules', '@oclif', 'core'), join(dir, 'node_modules', '@oclif', 'core'))
  symlinkSync(join(ROOT, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'))
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
    `import { COMMANDS as BUILTINS } from 'agentcli/builtins'\n${imports.join('\n')}\nexport const COMMANDS = {\n  ...BUILTINS,\n${entries.join('\n')}\n}\n`,
  )
  const built = spawnSync(process.execPath, [join(ROOT, 'bin', 'agentcli-build.js'), '--no-changelog', dir], {
    encoding: 'utf8',
  })
  expect(built.status, built.stderr).toBe(0)
  bin = join(dir, 'bin', 'run.js')
}, 120_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

const stable = (stdout: string) => stdout.replace(/"duration_ms": ?\d+/g, '"duration_ms":0')

describe('a tool with many commands', () => {
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

  it('gives the bundle a chunk of each self-contained command, and keeps the others in it', () => {
    expect(readdirSync(join(dir, 'dist', 'chunks')).length).toBe(COMMANDS - 20)
    const own = traced(['item30', '--limit', '4'])
    expect(own.data).toEqual({ id: '30', name: 'item', count: 4 })
    expect(own.compiled).toEqual(['bundle.cjs', expect.stringMatching(/^chunks\/\d+\.cjs$/)])
    const shared = traced(['item7', '--name', 'y'])
    expect(shared.data).toEqual({ id: '7', name: 'y', count: 10 })
    expect(shared.compiled).toEqual(['bundle.cjs'])
  })

  it('answers from the bundle as from the modules, byte for byte', async () => {
    // (A chunk's unnamed item says where its module sits, which differs between the two by design: named here.)
    // The modules' answer in-process (test/support/in-process.ts: always the modules, the same bytes as their bin,
    // test/cli/runtime/in-process.test.ts); the bundle's from the bin, chunks and all.
    for (const args of [
      ['item0'],
      ['item25', '--limit', '3', '--name', 'b'],
      ['item39', '--limit', '2', '--name', 'a'],
      ['item5', '--limit', '0'],
      ['item5', '--bogus'],
      ['item5', 'stray'],
      ['item12', '--format', 'text'],
      ['item12', '--fields', 'id,count'],
      ['--format', 'text', 'item3'],
      ['item'],
    ]) {
      const [bundled, modules] = await Promise.all([
        runTool(bin, args, { env: box().env }),
        runInProcess(dir, args, { env: box().env }),
      ])
      expect(stable(bundled.stdout), args.join(' ')).toBe(stable(modules.stdout))
      expect(bundled.code, args.join(' ')).toBe(modules.code)
    }
  })
})
