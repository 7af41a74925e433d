import { envelopeViolations } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * --no-input, --wait declarations and the bare invocation, in-process (test/support/in-process.ts). A terminal,
 * stdin and job workers: test/cli/contract/contract-input.test.ts.
 */
const box = useSandbox()

describe('--no-input: nothing ever waits for a person who is not there', () => {
  it('--no-input is a universal flag, reported as the reason, and in reference once', async () => {
    const run = await tasks(box(), ['--no-input', 'create', '--dry-run'])
    expect(run.code).toBe(2)
    expect(env(run).error.details).toMatchObject({ missing: ['--title'], reason: 'no_input' })
    const ref = env(await tasks(box(), ['reference'])).data
    expect(ref.global_flags.map((f: { name: string }) => f.name)).toContain('no-input')
    const create = ref.commands.find((c: { path: string }) => c.path === 'create')
    expect(create.params.map((p: { name: string }) => p.name)).not.toContain('no-input')
    // Answered by the flag, nothing is asked.
    const given = await tasks(box(), ['create', '--title', 'x', '--dry-run', '--no-input'])
    expect(given.code).toBe(0)
  })
})

describe('--wait on every async command', () => {
  it('is declared on async commands only, in reference and --help', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    const flagsOf = (path: string) =>
      ref.commands.find((c: { path: string }) => c.path === path).params.map((p: { name: string }) => p.name)
    expect(flagsOf('import')).toEqual(expect.arrayContaining(['wait', 'wait-timeout']))
    expect(flagsOf('create')).not.toContain('wait')
    const help = await tasks(box(), ['import', '--help'])
    expect(help.stdout).toContain('--wait-timeout')
  })
})

describe('a bare invocation', () => {
  it('off a terminal is one envelope: tool, version, commands in brief, the hint to run reference; exit 0', async () => {
    for (const args of [[], ['--compact']]) {
      const run = await tasks(box(), args)
      expect(run.code).toBe(0)
      expect(envelopeViolations(run.stdout, run.code)).toEqual([])
      const data = env(run).data
      expect(data).toMatchObject({ tool: 'tasks', version: '0.1.0', contract_version: 1 })
      expect(data.commands).toEqual(
        expect.arrayContaining([{ path: 'list', type: 'read', summary: 'List tasks' }, expect.anything()]),
      )
      expect(data.hint).toMatch(/reference/)
      expect(run.stderr).toBe('')
    }
  })

  it('a bad universal flag alone is still an error, not the overview', async () => {
    const run = await tasks(box(), ['--format', 'xml'])
    expect(run.code).toBe(2)
    expect(env(run)).toMatchObject({ ok: false, error: { code: 'E_VALIDATION', details: { got: 'xml' } } })
  })
})
