import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { editJson, useToolCopy } from '../../support/copy.js'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, runBinInProcess, tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * reference, context, doctor, changelog, in-process (test/support/in-process.ts): what needs a job worker, a hook
 * reading process.env or the build stays in test/cli/describe/self-description.test.ts.
 */
const box = useSandbox()
const copy = useToolCopy()

describe('reference', () => {
  it('describes the tool, its universal flags, every command and the catalogue', async () => {
    const run = await tasks(box(), ['reference'])
    expect(run.code).toBe(0)
    const ref = env(run).data
    expect(ref).toMatchObject({ tool: 'tasks', version: '0.1.0', schema_version: '1.0', risk_tier: 'low' })
    expect(ref.global_flags.map((f: { name: string }) => f.name)).toEqual([
      'format',
      'json',
      'fields',
      'compact',
      'pretty',
      'quiet',
      'no-input',
    ])
    const paths = ref.commands.map((c: { path: string }) => c.path)
    expect(paths).toEqual([...paths].sort())
    expect(paths).toEqual(expect.arrayContaining(['list', 'get', 'reference', 'context', 'doctor', 'changelog']))
    expect(ref.exit_codes['9']).toContain('person')
    expect(ref.error_codes.E_RATE_LIMITED).toMatchObject({ exit: 7, retryable: true })
  })

  it('describes params with kind, type, options, defaults and bounds', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    const list = ref.commands.find((c: { path: string }) => c.path === 'list')
    const byName = Object.fromEntries(list.params.map((p: { name: string }) => [p.name, p]))
    expect(byName.status).toMatchObject({ kind: 'flag', type: 'enum', options: ['open', 'done'], required: false })
    expect(byName.limit).toMatchObject({ type: 'integer', default: 20, minimum: 1, maximum: 100 })
    const get = ref.commands.find((c: { path: string }) => c.path === 'get')
    expect(get.params[0]).toMatchObject({ name: 'id', kind: 'arg', type: 'string', required: true })
    expect(get.errors).toEqual(expect.arrayContaining(['E_NOT_FOUND', 'E_USAGE', 'E_VALIDATION']))
    expect(get.examples[0]).toBe('tasks get 1')
  })

  it('supports --fields and --compact', async () => {
    const run = await tasks(box(), ['reference', '--fields', 'tool,commands.path', '--compact'])
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(1)
    expect(Object.keys(env(run).data)).toEqual(['tool', 'commands'])
    expect(Object.keys(env(run).data.commands[0])).toEqual(['path'])
  })

  it('includes commands from plugins, leaves hidden ones out, and lists extension codes', async () => {
    const ref = env(await fixture(box(), ['reference'])).data
    const paths = ref.commands.map((c: { path: string }) => c.path)
    expect(paths).toContain('doctor')
    expect(paths).toContain('queue status')
    expect(paths).not.toContain('secret')
    expect(ref.error_codes.E_QUOTA_EXCEEDED).toEqual({
      exit: 7,
      retryable: true,
      description: 'Quota used up for today.',
    })
  })
})

describe('release readiness', () => {
  const levels = [
    {
      declared: {
        level: 'stable',
        fcc_status: 'verified',
        mock_upstream_status: 'verified',
        live_smoke_status: 'verified',
      },
      level: 'stable',
      status: 'pass',
    },
    {
      declared: {
        level: 'beta',
        fcc_status: 'verified',
        mock_upstream_status: 'verified',
        live_smoke_status: 'missing',
      },
      level: 'beta',
      status: 'warn',
    },
    {
      declared: {
        level: 'beta',
        fcc_status: 'missing',
        mock_upstream_status: 'verified',
        live_smoke_status: 'missing',
      },
      level: 'unpublishable',
      status: 'fail',
    },
    {
      declared: {
        level: 'stable',
        fcc_status: 'verified',
        mock_upstream_status: 'verified',
        live_smoke_status: 'missing',
      },
      level: 'unpublishable',
      status: 'fail',
    },
    {
      declared: {
        level: 'stable',
        fcc_status: 'verified',
        mock_upstream_status: 'unknown',
        live_smoke_status: 'verified',
      },
      level: 'unpublishable',
      status: 'fail',
    },
  ]
  it.each(levels)(
    'declared $declared.level with fcc $declared.fcc_status, live $declared.live_smoke_status → $level, doctor $status',
    async ({ declared, level, status }) => {
      const dir = copy('test/fixtures/cli', (d) =>
        editJson(join(d, 'package.json'), (p) => Object.assign(p.agentcli as object, { release_readiness: declared })),
      )
      const bin = join(dir, 'bin/run.js')
      const ref = env(await runBinInProcess(bin, ['reference'], { env: box().env })).data
      expect(ref.release_readiness.level).toBe(level)
      if (level === 'unpublishable') expect(ref.release_readiness.reason).toMatch(/missing|unknown/)
      const doc = await runBinInProcess(bin, ['doctor'], { env: box().env })
      expect(doc.code).toBe(0)
      const check = env(doc).data.checks.find((c: { check: string }) => c.check === 'release_readiness')
      expect(check.status).toBe(status)
      expect(check.fix === null).toBe(status === 'pass')
    },
  )
})

describe('context', () => {
  it('reports version, profile, paths, redacted config and credential booleans', async () => {
    const configDir = join(box().env.XDG_CONFIG_HOME!, 'tasks')
    mkdirSync(configDir, { recursive: true })
    writeFileSync(
      join(configDir, 'config.json'),
      JSON.stringify({ base_url: 'https://tasks.example', api_token: 'canary-3f9a1c7e5b' }),
    )
    const run = await tasks(box(), ['context'], { env: { TASKS_PROFILE: 'staging' } })
    const data = env(run).data
    expect(data).toMatchObject({ version: '0.1.0', environment: 'staging', paths: { config_dir: configDir } })
    expect(data.config).toEqual({ base_url: 'https://tasks.example', api_token: '<redacted>' })
    expect(data.credentials).toEqual({
      configured: false,
      valid: false,
      expires_at: null,
      refreshable: false,
      source: null,
    })
    expect(run.stdout + run.stderr).not.toContain('canary-3f9a1c7e5b')
  })

  it('reports an injected token as configured from env, never its value', async () => {
    const run = await tasks(box(), ['context'], { env: { TASKS_TOKEN: 'canary-env-77c1d2e3' } })
    expect(env(run).data.credentials).toMatchObject({ configured: true, source: 'env' })
    expect(run.stdout + run.stderr).not.toContain('canary-env-77c1d2e3')
  })

  it('a config file that is not a JSON object is E_IO naming it', async () => {
    const configDir = join(box().env.XDG_CONFIG_HOME!, 'tasks')
    mkdirSync(configDir, { recursive: true })
    writeFileSync(join(configDir, 'config.json'), '[1,2]')
    const run = await tasks(box(), ['context'])
    expect(run.code).toBe(1)
    expect(env(run).error.details.path).toBe(join(configDir, 'config.json'))
  })

  it('--version, context.version and reference.version agree', async () => {
    const version = env(await tasks(box(), ['--version'])).data.version
    expect(env(await tasks(box(), ['context'])).data.version).toBe(version)
    expect(env(await tasks(box(), ['reference'])).data.version).toBe(version)
  })
})

describe('doctor', () => {
  it('passes on a healthy install with fix null exactly on pass', async () => {
    const run = await tasks(box(), ['doctor'])
    expect(run.code).toBe(0)
    const checks = env(run).data.checks
    expect(checks.map((c: { check: string }) => c.check)).toEqual([
      'release_readiness',
      'min_version',
      'config_dir',
      'credentials',
      'update',
      'trusted_root',
      'state_store',
    ])
    for (const c of checks) expect(c.fix === null).toBe(c.status === 'pass')
    expect(checks.find((c: { check: string }) => c.check === 'min_version').status).toBe('pass')
  })

  it('fails min_version when an installed skill needs a newer tool, with the upgrade command', async () => {
    const dir = join(box().root, '.agents', 'skills', 'tasks')
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      join(dir, 'SKILL.md'),
      '---\nname: tasks\ndescription: x\nmetadata:\n  openclaw:\n    requires:\n      min_version: "9.1.0"\n---\n',
    )
    const run = await tasks(box(), ['doctor'])
    expect(run.code).toBe(0)
    expect(env(run).ok).toBe(true)
    const check = env(run).data.checks.find((c: { check: string }) => c.check === 'min_version')
    expect(check).toMatchObject({ status: 'fail' })
    expect(check.fix).toContain('tasks update --to 9.1.0')
  })

  it('reports an unwritable config dir as a failing check, not an error', async () => {
    writeFileSync(join(box().root, 'not-a-dir'), '')
    const run = await tasks(box(), ['doctor'], { env: { XDG_CONFIG_HOME: join(box().root, 'not-a-dir') } })
    expect(run.code).toBe(0)
    const check = env(run).data.checks.find((c: { check: string }) => c.check === 'config_dir')
    expect(check.status).toBe('fail')
    expect(check.fix).toContain('not-a-dir')
    expect(env(run).data.summary.fail).toBeGreaterThanOrEqual(1)
  })
})

describe('changelog', () => {
  it('lists every release with no --since, newest first', async () => {
    const data = env(await tasks(box(), ['changelog'])).data
    expect(data.current_version).toBe('0.1.0')
    expect(data.entries.map((e: { version: string }) => e.version)).toEqual(['0.1.0', '0.0.1'])
    expect(Object.keys(data.entries[0].changes)).toEqual([
      'added',
      'changed',
      'fixed',
      'deprecated',
      'removed',
      'security',
    ])
  })

  it('--since 0.0.0 lists every release; --since <current> lists none; --since keeps strictly newer', async () => {
    expect(env(await tasks(box(), ['changelog', '--since', '0.0.0'])).data.entries).toHaveLength(2)
    expect(env(await tasks(box(), ['changelog', '--since', '0.1.0'])).data.entries).toEqual([])
    expect(
      env(await tasks(box(), ['changelog', '--since', '0.0.1'])).data.entries.map(
        (e: { version: string }) => e.version,
      ),
    ).toEqual(['0.1.0'])
  })

  it('--since banana is E_VALIDATION, exit 2', async () => {
    const run = await tasks(box(), ['changelog', '--since', 'banana'])
    expect(run.code).toBe(2)
    expect(env(run).error).toMatchObject({ code: 'E_VALIDATION', details: { got: 'banana' } })
  })
})

describe('one schema, three layers', () => {
  it('the SKILL.md frontmatter follows the Agent Skills format', () => {
    const text = readFileSync(join(ROOT, 'examples/tasks/skills/tasks/SKILL.md'), 'utf8')
    const front = /^---\n([\s\S]*?)\n---/.exec(text)![1]!
    expect(front).toMatch(/^name: tasks$/m)
    const description = JSON.parse(/^description: (.*)$/m.exec(front)![1]!)
    expect(description.length).toBeLessThanOrEqual(1024)
    expect(front).toContain('min_version: "0.1.0"')
  })
})
