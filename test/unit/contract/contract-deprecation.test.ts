import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, ROOT, seed, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()
const SKILL = join(ROOT, 'examples/tasks/skills/tasks/SKILL.md')

type Described = { path: string; deprecated?: unknown; deprecated_fields?: unknown; params: Array<{ name: string }> }
const command = (ref: { commands: Described[] }, path: string) => ref.commands.find((c) => c.path === path)!

describe('deprecation is visible to agents', () => {
  it('reference marks a deprecated command, flag and output field with the replacement and the version', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    expect(command(ref, 'show').deprecated).toEqual({
      message: "command 'show' is deprecated and goes away in 1.0.0; use tasks get",
      replaced_by: 'tasks get',
      removed_in: '1.0.0',
    })
    expect(command(ref, 'get').deprecated).toBeUndefined()
    const name = command(ref, 'create').params.find((p) => p.name === 'name')
    expect(name).toMatchObject({ deprecated: { replaced_by: '--title', removed_in: '1.0.0' } })
    expect(command(ref, 'create').params.find((p) => p.name === 'title')).not.toHaveProperty('deprecated')
    expect(command(ref, 'context').deprecated_fields).toEqual([
      expect.objectContaining({ path: 'environment', replaced_by: 'env', removed_in: '2.0' }),
    ])
    const schema = (command(ref, 'context') as unknown as { output_schema: { properties: Record<string, object> } })
      .output_schema
    expect(schema.properties.environment).toMatchObject({ deprecated: true })
  })

  it('--help and SKILL.md say it too', async () => {
    const help = await tasks(box(), ['create', '--help'])
    expect(help.stdout).toMatch(
      /DEPRECATED\n\s+--name: flag --name is deprecated and goes away in 1\.0\.0; use --title/,
    )
    const show = await tasks(box(), ['show', '--help'])
    expect(show.stdout).toContain('"show" command has been deprecated')
    const skill = readFileSync(SKILL, 'utf8')
    expect(skill).toContain("**Deprecated:** command 'show' is deprecated and goes away in 1.0.0; use tasks get.")
    expect(skill).toContain('**Deprecated:** flag --name is deprecated')
    expect(skill).toContain('Output field `environment` is deprecated')
  })

  it('using a deprecated command adds a meta.notices entry, on success and failure alike; stdout stays one envelope', async () => {
    seed(box(), [{ id: '1', title: 'first' }])
    const ok = await tasks(box(), ['show', '1'])
    expect(ok.code).toBe(0)
    expect(env(ok).data.title).toBe('first')
    expect(env(ok).meta.notices).toEqual([
      {
        type: 'deprecated',
        what: 'command',
        name: 'show',
        message: "command 'show' is deprecated and goes away in 1.0.0; use tasks get",
        replaced_by: 'tasks get',
        removed_in: '1.0.0',
      },
    ])
    const missing = await tasks(box(), ['show', '9'])
    expect(missing.code).toBe(3)
    expect(env(missing).error.code).toBe('E_NOT_FOUND')
    expect(env(missing).meta.notices).toEqual([expect.objectContaining({ type: 'deprecated', name: 'show' })])
    // `--quiet` silences oclif's stderr warning, never the notice.
    const quiet = await tasks(box(), ['show', '1', '--quiet'])
    expect(quiet.stderr).toBe('')
    expect(env(quiet).meta.notices).toHaveLength(1)
  })

  it('using a deprecated flag adds a notice; not using it adds none', async () => {
    const used = await tasks(box(), ['create', '--name', 'x', '--dry-run'])
    expect(used.code).toBe(0)
    expect(env(used).data.preview.changes[0].after.title).toBe('x')
    expect(env(used).meta.notices).toEqual([
      expect.objectContaining({ type: 'deprecated', what: 'flag', name: '--name', replaced_by: '--title' }),
    ])
    const plain = await tasks(box(), ['create', '--title', 'x', '--dry-run'])
    expect(env(plain).meta).not.toHaveProperty('notices')
  })
})

describe('context and reference', () => {
  it('context reports env (the spec key) and keeps environment as its deprecated alias', async () => {
    const run = await tasks(box(), ['context'], { env: { TASKS_PROFILE: 'staging' } })
    expect(env(run).data).toMatchObject({ env: 'staging', environment: 'staging', contract_version: 1 })
  })

  it('reference and context carry contract_version, the agentcli contract major', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    expect(ref.contract_version).toBe(1)
    expect(Number.isInteger(ref.contract_version)).toBe(true)
  })
})
