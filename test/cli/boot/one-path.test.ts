import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT, seed, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const work = mkdtempSync(join(tmpdir(), 'agentcli-one-path-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/**
 * Whether a call of the example tool loaded oclif's `Config`: `Config.load` looks for the user's theme file (the
 * manifest is no sign: the stored help reads it to know it is the one the help was rendered from).
 */
function loadsOclifConfig(args: string[]): boolean {
  const out = join(box().root, 'reads.txt')
  const result = spawnSync(
    process.execPath,
    ['--import', join(ROOT, 'test/fixtures/record-reads.mjs'), TASKS_BIN, ...args],
    { env: { PATH: process.env.PATH, ...box().env, RECORD_READS_TO: out }, encoding: 'utf8' },
  )
  expect(result.stdout.length, args.join(' ')).toBeGreaterThan(0)
  return readFileSync(out, 'utf8')
    .split('\n')
    .some((f) => f.endsWith('theme.json'))
}

describe('one path: every command on agentcli’s base, oclif’s Config only when a run needs it', () => {
  it('runs the tool’s own commands, writes and built-ins included, without loading oclif’s Config', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    for (const args of [
      ['list'],
      ['get', '1'],
      ['--version'],
      ['--pretty', 'list'],
      ['list', '--bogus'],
      ['create', '--title', 'x', '--dry-run'],
      ['delete', '1', '--', '2'],
      ['login', 'approve', '--code', 'x'],
      ['job', 'list'],
      ['context'],
      // Off a terminal, a command's help is the text the build stored (src/runtime/stored-help.ts).
      ['list', '--help'],
      ['job', 'list', '-h'],
      // Words that name no command, and a topic alone: the router's E_USAGE from the tool's own map.
      ['nope'],
      ['job'],
      ['lst', '--bogus'],
    ])
      expect(loadsOclifConfig(args), args.join(' ')).toBe(false)
  })

  it('loads it for help, a bare call, help on a word that names nothing, and what lists every command', () => {
    for (const args of [
      ['--help'],
      ['list', '--help', '--pretty'],
      ['help', 'list'],
      [],
      ['nope', '--help'],
      ['reference'],
    ])
      expect(loadsOclifConfig(args), args.join(' ')).toBe(true)
  })
})

/** A tool of its own, run from its modules: `files` are written under its root beside package.json. */
function tool(name: string, pjson: Record<string, unknown>, files: Record<string, string>): string {
  const dir = join(work, name)
  mkdirSync(join(dir, 'bin'), { recursive: true })
  mkdirSync(join(dir, 'node_modules', '@oclif'), { recursive: true })
  symlinkSync(ROOT, join(dir, 'node_modules', 'agentcli'))
  symlinkSync(join(ROOT, 'node_modules', '@oclif', 'core'), join(dir, 'node_modules', '@oclif', 'core'))
  symlinkSync(join(ROOT, 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'))
  const oclif = { bin: name, dirname: `agentcli-${name}-test`, topicSeparator: ' ', ...(pjson.oclif as object) }
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name,
      version: '0.1.0',
      type: 'module',
      ...pjson,
      oclif: { commands: { strategy: 'explicit', target: './index.js', identifier: 'COMMANDS' }, ...oclif },
    }),
  )
  writeFileSync(
    join(dir, 'bin', 'run.js'),
    "#!/usr/bin/env node\nconst { start } = await import('agentcli/boot')\nawait start(new URL('..', import.meta.url))\n",
  )
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text)
  return join(dir, 'bin', 'run.js')
}

/** A command that says which config it was handed: agentcli's own, or oclif's (which can find commands). */
const WHICH = `
export class Which extends AgentCommand {
  static summary = 'Which config'
  static aliases = ['which:all']
  static output = output((z) => z.object({ oclif: z.boolean(), id: z.string() }))
  async execute() {
    await this.parse(Which)
    return { oclif: typeof this.config.findCommand === 'function', id: this.id }
  }
}
`

describe('a command is told apart by identity, never by name or shape', () => {
  it('runs a look-alike class named AgentCommand (not on agentcli’s base) through oclif, once', async () => {
    const bin = tool(
      'lookalike',
      {},
      {
        'index.js': `import { Command } from '@oclif/core'
import { AgentCommand as Real, output } from 'agentcli'
let runs = 0
class AgentCommand extends Command {
  static summary = 'Looks like ours'
  execute = async () => ({ never: true })
  async run() {
    runs++
    return { oclif: typeof this.config.findCommand === 'function', runs }
  }
}
const AgentCommand2 = AgentCommand
${WHICH.replace('extends AgentCommand', 'extends Real')}
export const COMMANDS = { fake: AgentCommand2, which: Which }
`,
      },
    )
    const fake = await runTool(bin, ['fake'], { env: box().env })
    expect(JSON.parse(fake.stdout).data).toEqual({ oclif: true, runs: 1 })
    const own = await runTool(bin, ['which'], { env: box().env })
    expect(JSON.parse(own.stdout).data).toEqual({ oclif: false, id: 'which' })
  })

  it('sends an alias, even one longer than an id, to oclif’s router', async () => {
    const bin = tool(
      'aliased',
      {},
      {
        'index.js': `import { AgentCommand, output } from 'agentcli'
${WHICH}
class Short extends AgentCommand {
  static summary = 'Short'
  static output = output((z) => z.object({ short: z.literal(true) }))
  async execute() {
    await this.parse(Short)
    return { short: true }
  }
}
export const COMMANDS = { which: Short, real: Which }
`,
      },
    )
    // `which all` is an alias of `real`, longer than the id `which`: the alias wins, as oclif's router decides.
    const aliased = await runTool(bin, ['which', 'all'], { env: box().env })
    expect(JSON.parse(aliased.stdout).data).toEqual({ oclif: true, id: 'real' })
    const short = await runTool(bin, ['which'], { env: box().env })
    expect(JSON.parse(short.stdout).data).toEqual({ short: true })
  })

  it('runs a tool’s oclif hooks (init, prerun) around its command, on agentcli’s base', async () => {
    const bin = tool(
      'hooked',
      { oclif: { hooks: { init: './init.js', prerun: './prerun.js' } } },
      {
        'index.js': `import { AgentCommand, output } from 'agentcli'\n${WHICH}\nexport const COMMANDS = { which: Which }\n`,
        'init.js': "export default async function () { process.stderr.write('init hook\\n') }\n",
        'prerun.js': "export default async function (o) { process.stderr.write('prerun ' + o.Command.id + '\\n') }\n",
      },
    )
    const run = await runTool(bin, ['which'], { env: box().env })
    expect(JSON.parse(run.stdout).data).toEqual({ oclif: true, id: 'which' })
    expect(run.stderr).toBe('init hook\nprerun which\n')
  })
})

describe('a deprecated command or flag says so on stderr, once', () => {
  it('as oclif words it', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const show = await tasks(box(), ['show', '1'])
    expect(show.stderr).toBe(
      'warning: The "show" command has been deprecated and will be removed in version 1.0.0. Use "tasks get" instead.\n',
    )
    const create = await tasks(box(), ['create', '--name', 'x', '--dry-run'])
    expect(create.stderr).toBe(
      'warning: The "name" flag has been deprecated and will be removed in version 1.0.0. Use "--title" instead.\n',
    )
    expect((await tasks(box(), ['show', '1', '--quiet'])).stderr).toBe('')
  })
})

describe('--version', () => {
  it('takes nothing but the universal flags: anything else is E_USAGE naming it', async () => {
    for (const args of [
      ['--version', '--bogus'],
      ['--version', 'list'],
    ]) {
      const run = await tasks(box(), args)
      expect(run.code, args.join(' ')).toBe(2)
      const error = JSON.parse(run.stdout).error
      expect(error.code).toBe('E_USAGE')
      expect(error.details.got).toBe(args[1])
      expect(error.details.allowed).toContain('--format')
    }
    const agentcli = await runTool(join(ROOT, 'bin/agentcli.js'), ['--version', '--bogus'], { env: box().env })
    expect([agentcli.code, JSON.parse(agentcli.stdout).error.code]).toEqual([2, 'E_USAGE'])
    expect(JSON.parse((await tasks(box(), ['--version', '--compact'])).stdout).data.tool).toBe('tasks')
  })
})
