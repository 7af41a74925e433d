#!/usr/bin/env node
// How start-up and `reference` grow with the number of commands: a synthetic tool with 10 and with 1000 simple
// commands, built in a temp dir with agentcli-build, `<tool> <cmd>`, `<tool> <cmd> --help`, `<tool> reference` (whole, `--compact` and of one command) alternated round-robin. Prints medians
// and the 1000/10 ratios. Writes nothing inside the repository (BENCH_KEEP=1 keeps the temp dir
// for a look). BENCH_ROUNDS sets the rounds (15). Not a test.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 15)
const node = process.execPath
const work = mkdtempSync(join(tmpdir(), 'agentcli-scale-'))

function command(i) {
  return `import { AgentCommand, Flags, output } from 'agentcli'

export default class Command${i} extends AgentCommand {
  static summary = 'Show item ${i} of the synthetic store'
  static description =
    'Reads item ${i} and reports its id, name and count. A longer description, as real tools have: it says what the command reads, what it returns, which flags narrow it, and what an agent should do next with the result.'
  static examples = ['<%= config.bin %> item${i} --name a', '<%= config.bin %> item${i} --limit 5']
  static kind = 'read'
  static flags = {
    name: Flags.string({ description: 'Only the item with this name.' }),
    limit: Flags.integer({ description: 'Items per page (1-100).', default: 10, min: 1, max: 100 }),
  }
  static output = output((z) => z.object({ id: z.string(), name: z.string(), count: z.number().int() }))
  async execute() {
    return { id: '${i}', name: 'item', count: 1 }
  }
}
`
}

/** A tool with `n` commands (`item0` …) plus the built-ins, its dependencies linked from this checkout. */
function makeTool(n) {
  const dir = join(work, `tool-${n}`)
  mkdirSync(join(dir, 'dist', 'commands'), { recursive: true })
  mkdirSync(join(dir, 'bin'), { recursive: true })
  mkdirSync(join(dir, 'node_modules', '@oclif'), { recursive: true })
  symlinkSync(root, join(dir, 'node_modules', 'agentcli'))
  symlinkSync(join(root, 'node_modules', '@oclif', 'core'), join(dir, 'node_modules', '@oclif', 'core'))
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: `scale-${n}`,
      version: '0.1.0',
      type: 'module',
      bin: { scale: './bin/run.js' },
      dependencies: { agentcli: '*', '@oclif/core': '*' },
      oclif: {
        bin: 'scale',
        dirname: `agentcli-scale-${n}`,
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
  const imports = []
  const entries = []
  for (let i = 0; i < n; i++) {
    writeFileSync(join(dir, 'dist', 'commands', `item${i}.js`), command(i))
    imports.push(`import Item${i} from './commands/item${i}.js'`)
    entries.push(`  item${i}: Item${i},`)
  }
  writeFileSync(
    join(dir, 'dist', 'index.js'),
    `import { COMMANDS as BUILTINS } from 'agentcli/builtins'\n${imports.join('\n')}\nexport const COMMANDS = {\n  ...BUILTINS,\n${entries.join('\n')}\n}\n`,
  )
  const built = spawnSync(node, [join(root, 'bin', 'agentcli-build.js'), '--no-changelog', dir], { encoding: 'utf8' })
  if (built.status !== 0) throw new Error(`build of ${n} commands failed: ${built.stderr}`)
  return join(dir, 'bin', 'run.js')
}

try {
  const { env } = benchHome('', { home: join(work, 'home') })
  const small = makeTool(10)
  const large = makeTool(1000)
  const pairs = [
    ['item0', ['item0']],
    ['item0 --help', ['item0', '--help']],
    ['reference item0', ['reference', 'item0']],
    ['reference --compact', ['reference', '--compact']],
    ['reference', ['reference']],
  ]
  const variants = pairs.flatMap(([name, args, vars = env]) => [
    [`10: ${name}`, [small, ...args], vars],
    [`1000: ${name}`, [large, ...args], vars],
  ])
  const times = new Map(variants.map(([name]) => [name, []]))
  // Warm-up: the page cache and each command's code cache.
  for (let warm = 0; warm < 2; warm++)
    for (const [, args, vars] of variants) spawnSync(node, args, { env: vars, stdio: 'ignore' })
  for (let round = 0; round < rounds; round++) {
    for (const [name, args, vars] of variants) {
      const start = process.hrtime.bigint()
      const result = spawnSync(node, args, { env: vars, stdio: ['ignore', 'ignore', 'pipe'] })
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      if (result.status !== 0) throw new Error(`${name} exited ${result.status}: ${result.stderr}`)
      times.get(name).push(ms)
    }
  }
  const m = Object.fromEntries([...times].map(([name, xs]) => [name, median(xs)]))
  const lines = [`scale bench: ${rounds} rounds, medians (ms)`]
  for (const [name] of variants) lines.push(`  ${name.padEnd(34)} ${m[name].toFixed(1)}`)
  lines.push('  1000/10 (target <= 1.3x for start-up and reference <path>):')
  for (const [name] of pairs)
    lines.push(`    ${name.padEnd(32)} ${(m[`1000: ${name}`] / m[`10: ${name}`]).toFixed(2)}x`)
  // The whole reference describes every command: its time follows its output, per command.
  const perCommand = (m['1000: reference'] - m['10: reference']) / 990
  lines.push(`  full reference, per added command: ${(perCommand * 1000).toFixed(0)} us`)
  process.stdout.write(`${lines.join('\n')}\n`)
} finally {
  if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true })
  else process.stderr.write(`kept ${work}\n`)
}
