import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { editJson, useToolCopy } from '../../support/copy.js'
import { env, fixture, ROOT, seed, tasks, useSandbox } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'
import { schemaValidator } from '../../support/schema.js'
import { sshKeys } from '../../support/ssh-keys.js'

/*
 * Self-description where a process is needed: a job's worker, a hook reading process.env, the build. The rest
 * runs in-process: test/unit/describe/self-description.test.ts.
 */
const box = useSandbox()
const copy = useToolCopy()
const BUILD = join(ROOT, 'bin/agentcli-build.js')

describe('reference', () => {
  it('has a valid JSON Schema 2020-12 for every command, and real outputs validate against it', async () => {
    seed(box(), [{ id: '1', title: 'first' }])
    const input = join(box().root, 'in.jsonl')
    writeFileSync(input, '{"title":"imported"}\n')
    const ref = env(await tasksInProcess(box(), ['reference'])).data
    const ajv = schemaValidator()
    const schemaOf = (path: string, key = 'output_schema') =>
      ajv.compile(ref.commands.find((c: { path: string }) => c.path === path)[key])
    // The calls in-process (test/support/in-process.ts: the same bytes as the bin's), the job's submission through
    // the bin: what its detached worker writes is what this file is here for.
    const data = async (args: string[], run = tasksInProcess) => {
      const done = await run(box(), args)
      expect(done.code, `${args.join(' ')}: ${done.stdout}`).toBe(0)
      return env(done).data
    }
    const importToken = (await data(['import', '--file', input, '--dry-run'])).confirm_token
    const job = await data(['import', '--file', input, '--confirm', importToken], tasks)
    for (let i = 0; i < 100 && (await data(['job', 'status', '--id', job.job_id])).status !== 'succeeded'; i++)
      await new Promise((r) => setTimeout(r, 100))
    const login = env(await tasksInProcess(box(), ['login'])).error.details
    await data(['login', 'approve', login.user_code])
    const runs: Record<string, () => Promise<unknown[]>> = {
      get: async () => [await data(['get', '1'])],
      show: async () => [await data(['show', '1'])],
      create: async () => [await data(['create', '--title', 'x', '--dry-run'])],
      edit: async () => [await data(['edit', '1', '--status', 'done', '--dry-run'])],
      delete: async () => [await data(['delete', '1', '--dry-run'])],
      import: async () => [job, await data(['import', '--file', input, '--dry-run'])],
      export: async () =>
        (await tasksInProcess(box(), ['export'])).stdout
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l))
          .filter((l) => l.type === 'item')
          .map((l) => l.data),
      'job status': async () => [await data(['job', 'status', '--id', job.job_id])],
      'job list': async () => [await data(['job', 'list'])],
      'job result': async () => [await data(['job', 'result', '--id', job.job_id])],
      // A finished job cannot be cancelled; the cancel output is validated in long-work.test.ts on a running job.
      'job cancel': async () => [await data(['job', 'status', '--id', job.job_id])],
      'login resume': async () => [await data(login.resume.split(' ').slice(1))],
      login: async () => [await data(['login'])],
      whoami: async () => [await data(['whoami'])],
      logout: async () => [await data(['logout'])],
      // These need a mock upstream; their real outputs are validated against these schemas in
      // upstream.test.ts (sync) and update.test.ts (update).
      sync: async () => [],
      update: async () => [],
      // A delete under the prod profile is held for approval; a key made here approves it.
      approve: async () => {
        const held = await tasksInProcess(box(), ['delete', '1', '--dry-run'], { env: { TASKS_PROFILE: 'prod' } })
        const keys = sshKeys()
        try {
          const request = env(held).data.approval.request
          return [await data(['approve', request, '--key', keys.make('alice').path])]
        } finally {
          keys.dispose()
        }
      },
    }
    expect(schemaOf('import', 'result_schema')(await data(['job', 'result', '--id', job.job_id]))).toBe(true)
    const first = ['login resume', 'login', 'whoami']
    const order = [
      ...first,
      ...ref.commands.map((c: { path: string }) => c.path).filter((p: string) => !first.includes(p) && p !== 'logout'),
      'logout',
    ]
    for (const path of order) {
      const command = ref.commands.find((c: { path: string }) => c.path === path)
      expect(command.output_schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
      const validate = ajv.compile(command.output_schema)
      const outputs = await (runs[path] ?? (async () => [await data(path.split(' '))]))()
      if (path !== 'sync' && path !== 'update') expect(outputs.length, path).toBeGreaterThan(0)
      for (const out of outputs) expect(validate(out), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true)
    }
    // Some thirty runs, a job's worker, and an ssh-keygen key for `approve`: more than the default on a loaded machine.
  }, 90_000)
})

describe('doctor', () => {
  it('includes checks contributed through the agentcli:doctor hook', async () => {
    const pass = await fixture(box(), ['doctor'])
    expect(env(pass).data.checks).toContainEqual({
      check: 'fixture_upstream',
      status: 'pass',
      message: 'reachable',
      fix: null,
    })
    const fail = await fixture(box(), ['doctor'], { env: { FIXTURE_DOCTOR_FAIL: '1' } })
    expect(env(fail).data.checks).toContainEqual({
      check: 'fixture_upstream',
      status: 'fail',
      message: 'upstream unreachable',
      fix: 'set FIXTURE_URL',
    })
  })
})

describe('changelog', () => {
  it('the build fails when the newest release is not the package version', () => {
    const dir = copy('examples/tasks', (d) =>
      editJson(join(d, 'package.json'), (p) => Object.assign(p, { version: '0.2.0' })),
    )
    const result = spawnSync(process.execPath, [BUILD, dir], { encoding: 'utf8' })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('newest release is 0.1.0, but package.json says 0.2.0')
  })
})

describe('one schema, three layers', () => {
  it('the committed SKILL.md is what the generator writes', () => {
    // On a copy: the check builds the tool it checks, and the example's own build is what every other test runs
    // while this one does (rebuilt in place, a start could read a half-written bundle or manifest).
    const result = spawnSync(process.execPath, [BUILD, '--skill', 'check', copy('examples/tasks')], {
      encoding: 'utf8',
    })
    expect(result.stderr).toContain('skill fresh')
    expect(result.status).toBe(0)
  })

  it('a changed flag description changes --help, reference and SKILL.md, and a stale SKILL.md is caught', async () => {
    const before = 'Only tasks with this status.'
    const after = 'Only the tasks in this state (drift probe).'
    const dir = copy('examples/tasks', (d) => {
      const file = join(d, 'dist/commands/list.js')
      writeFileSync(file, readFileSync(file, 'utf8').replace(before, after))
    })
    // One build: `--skill check` writes the manifest and the bundle (its report line says the build went through)
    // before it finds the skill stale, so --help and reference below run from that build.
    const check = spawnSync(process.execPath, [BUILD, '--skill', 'check', dir], { encoding: 'utf8' })
    expect(check.stderr).toMatch(/: 26 commands, changelog \d+, bundle \d+ KiB, skill stale\n/)
    expect(check.status).toBe(1)
    expect(check.stderr).toContain('SKILL.md is stale')
    const bin = join(dir, 'bin/run.js')
    const help = await runTool(bin, ['list', '--help'], { env: box().env })
    expect(help.stdout).toContain(after)
    const ref = env(await runTool(bin, ['reference'], { env: box().env })).data
    const status = ref.commands
      .find((c: { path: string }) => c.path === 'list')
      .params.find((p: { name: string }) => p.name === 'status')
    expect(status.description).toBe(after)
    expect(spawnSync(process.execPath, [BUILD, '--skill', 'write', dir], { encoding: 'utf8' }).status).toBe(0)
    expect(readFileSync(join(dir, 'skills/tasks/SKILL.md'), 'utf8')).toContain(after)
  })
})
