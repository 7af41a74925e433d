import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { useToolCopy } from '../../support/copy.js'
import { env, ROOT, seed, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, runBinInProcess, tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * Command kinds and their audit, in-process (test/support/in-process.ts). What needs a process: a hook reading
 * process.env, every read with stdin closed (`mcp`): test/cli/command/kinds.test.ts.
 */
const box = useSandbox()
const copy = useToolCopy()

type Ref = { commands: Array<{ path: string; type: string }>; command_kinds: Record<string, string> }
type AuditLine = Record<string, unknown>

const auditLines = (b: Sandbox): AuditLine[] => {
  const path = join(b.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl')
  if (!existsSync(path)) return []
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditLine)
}

/** Every file and directory under `dir` with a digest of its bytes: a changed, new or removed entry shows. */
function snapshot(dir: string, skip: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    if (!existsSync(d) || d === skip) return
    for (const name of readdirSync(d)) {
      const path = join(d, name)
      if (path === skip) continue
      const stat = statSync(path)
      if (stat.isDirectory()) {
        out[`${path}/`] = 'dir'
        walk(path)
      } else out[path] = createHash('sha256').update(readFileSync(path)).digest('hex')
    }
  }
  walk(dir)
  return out
}

describe('command kinds', () => {
  it('reference declares every command honestly: read, local (session, credentials, jobs) or write', async () => {
    const run = await tasks(box(), ['reference'])
    expect(run.code).toBe(0)
    const ref = env(run).data as Ref
    const kinds = Object.fromEntries(ref.commands.map((c) => [c.path, c.type]))
    expect(kinds).toMatchObject({
      'job cancel': 'local',
      login: 'local',
      'login resume': 'local',
      logout: 'local',
      create: 'write',
      delete: 'write',
      edit: 'write',
      import: 'write',
      sync: 'write',
      update: 'write',
      list: 'read',
      get: 'read',
      export: 'read',
      reference: 'read',
      context: 'read',
      doctor: 'read',
      changelog: 'read',
      whoami: 'read',
      'job status': 'read',
      'job list': 'read',
      'job result': 'read',
    })
    expect(Object.keys(ref.command_kinds)).toEqual(['read', 'local', 'write'])
    expect(ref.command_kinds.local).toMatch(/without a confirm token/)
  })

  it('a local command carries no write flags and no confirm-token errors', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    const logout = ref.commands.find((c: { path: string }) => c.path === 'logout')
    expect(logout.errors).not.toContain('E_CONFIRMATION_REQUIRED')
    expect(logout.params.map((p: { name: string }) => p.name)).not.toContain('dry-run')
  })

  it('--help names the kind of the command', async () => {
    for (const [args, kind] of [
      [['job', 'cancel'], 'local'],
      [['logout'], 'local'],
      [['create'], 'write'],
      [['list'], 'read'],
    ] as const) {
      const run = await tasks(box(), [...args, '--help'])
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(new RegExp(`KIND\\n\\s+${kind}: `))
    }
  })

  it('SKILL.md explains the kinds and marks each command with its own', () => {
    const skill = readFileSync(join(ROOT, 'examples/tasks/skills/tasks/SKILL.md'), 'utf8')
    expect(skill).toContain('- `local`: Changes local state')
    expect(skill).toContain('### `tasks logout` (local)')
    expect(skill).toContain('### `tasks job cancel` (local)')
    expect(skill).toContain('### `tasks create` (write)')
    expect(skill).toContain('### `tasks list` (read)')
  })
})

describe('a kind that is none of the three', () => {
  it('is E_INTERNAL naming it, and the command does not run: a typo never passes as a read', async () => {
    const dir = copy('test/fixtures/cli', (d) => {
      writeFileSync(
        join(d, 'commands', 'typo.js'),
        [
          "import { writeFileSync } from 'node:fs'",
          "import { AgentCommand } from 'agentcli'",
          'export default class Typo extends AgentCommand {',
          "  static kind = 'wirte'",
          '  async execute() {',
          "    writeFileSync(process.env.TYPO_MARK, 'ran')",
          '    return {}',
          '  }',
          '}',
        ].join('\n'),
      )
      // The fixture lists its commands (oclif's explicit strategy): the new one joins them.
      appendFileSync(join(d, 'index.js'), "import Typo from './commands/typo.js'\nCOMMANDS.typo = Typo\n")
    })
    const mark = join(box().root, 'ran')
    const run = await runBinInProcess(join(dir, 'bin/run.js'), ['typo'], { env: { ...box().env, TYPO_MARK: mark } })
    expect(run.code).toBe(1)
    expect(env(run).error).toMatchObject({ code: 'E_INTERNAL' })
    expect(env(run).error.message).toContain('"wirte"')
    expect(existsSync(mark)).toBe(false)
  })
})

describe('audit of every non-read call', () => {
  it('a local command leaves one audit line, kind local, mode direct, with its outcome', async () => {
    const run = await tasks(box(), ['logout'])
    expect(run.code).toBe(0)
    const lines = auditLines(box())
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      command: 'logout',
      kind: 'local',
      mode: 'direct',
      result_code: 'OK',
      exit_code: 0,
    })
    expect(Date.parse(lines[0]!.time as string)).not.toBeNaN()
  })

  it('a local command that fails is audited with its error code', async () => {
    const run = await tasks(box(), ['job', 'cancel', '--id', 'job_0123456789abcdef0123'])
    expect(run.code).toBe(3)
    expect(auditLines(box())).toEqual([
      expect.objectContaining({ command: 'job cancel', kind: 'local', result_code: 'E_NOT_FOUND', exit_code: 3 }),
    ])
  })

  it('a write refused at parse (unknown flag, bad value, bad --format) is audited as refused', async () => {
    seed(box(), [{ id: '1', title: 'first' }])
    const unknown = await tasks(box(), ['create', '--title', 'x', '--bogus'])
    expect(env(unknown).error.code).toBe('E_USAGE')
    const bad = await tasks(box(), ['edit', '1', '--status', 'sideways', '--dry-run'])
    expect(env(bad).error.code).toBe('E_VALIDATION')
    const format = await tasks(box(), ['delete', '1', '--format', 'yaml'])
    expect(format.code).toBe(2)
    const lines = auditLines(box())
    expect(lines.map((l) => [l.command, l.kind, l.mode, l.result_code, l.exit_code])).toEqual([
      ['create', 'write', 'refused', 'E_USAGE', 2],
      ['edit', 'write', 'refused', 'E_VALIDATION', 2],
      ['delete', 'write', 'refused', 'E_VALIDATION', 2],
    ])
  })

  it('a write that gets past parse keeps its own richer record, and the kind', async () => {
    const run = await tasks(box(), ['create', '--title', 'x', '--dry-run'])
    expect(run.code).toBe(0)
    const [line] = auditLines(box())
    expect(line).toMatchObject({ command: 'create', kind: 'write', mode: 'dry_run', result_code: 'OK' })
    expect(line!.token_id).toEqual(expect.any(String))
  })

  it('a confirm token given to a write is never written to the audit log, even when the call is refused early', async () => {
    const token = 'v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBB'
    await tasks(box(), ['create', '--title', 'x', '--bogus', '--confirm', token])
    await tasks(box(), ['create', '--title', 'x', '--bogus', `--confirm=${token}`])
    const raw = readFileSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
    expect(raw).not.toContain(token)
    expect(auditLines(box())).toHaveLength(2)
  })

  it('read commands and help leave no audit line', async () => {
    seed(box(), [{ id: '1', title: 'first' }])
    for (const args of [['list'], ['get', '1'], ['reference'], ['create', '--help'], ['list', '--bogus']])
      await tasks(box(), args)
    expect(auditLines(box())).toEqual([])
  })

  it("a plugin's local command refused at parse is audited in the loading tool's data dir", async () => {
    const run = await fixture(box(), ['job', 'cancel', '--id', 'nope', '--bogus'])
    expect(run.code).toBe(2)
    const path = join(box().env.XDG_DATA_HOME!, 'agentcli-fixture', 'audit.jsonl')
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({
      command: 'job cancel',
      kind: 'local',
      mode: 'direct',
      result_code: 'E_USAGE',
    })
  })
})

describe('read commands change nothing outside the cache dir', () => {
  it('the job reads report a dead worker as failed without writing it; job cancel (local) records it', async () => {
    const b = box()
    const dead = spawnSync(process.execPath, ['-e', '0'])
    expect(dead.status).toBe(0)
    const id = 'job_0123456789abcdef0123'
    const dir = join(b.env.XDG_DATA_HOME!, 'tasks', 'jobs', id)
    mkdirSync(dir, { recursive: true })
    const record = {
      job_id: id,
      command: 'import',
      argv: [],
      schema_version: '1.0',
      status: 'running',
      progress: 0.5,
      eta_seconds: null,
      message: null,
      submitted_at: '2026-01-02T03:04:05.000Z',
      started_at: '2026-01-02T03:04:06.000Z',
      finished_at: null,
      updated_at: '2026-01-02T03:04:07.000Z',
      worker_pid: dead.pid,
      worker_start: null,
      cancel_requested: false,
      error: null,
      result_kind: null,
    }
    writeFileSync(join(dir, 'job.json'), JSON.stringify(record))
    const before = snapshot(b.root, b.env.XDG_CACHE_HOME!)
    for (const args of [
      ['job', 'status', '--id', id],
      ['job', 'list'],
      ['job', 'result', '--id', id],
      ['job', 'status', '--id', id],
    ]) {
      const run = await tasks(b, args)
      expect(run.stdout).toMatch(/"failed"|worker \(pid \d+\) died/)
      expect(snapshot(b.root, b.env.XDG_CACHE_HOME!), args.join(' ')).toEqual(before)
    }
    const status = env(await tasks(b, ['job', 'status', '--id', id])).data
    // The same answer on every read: the job ended at its last sign of life.
    expect(status).toMatchObject({
      status: 'failed',
      finished_at: '2026-01-02T03:04:07.000Z',
      error: { code: 'E_INTERRUPTED' },
    })
    const cancel = await tasks(b, ['job', 'cancel', '--id', id])
    expect(env(cancel).error).toMatchObject({ code: 'E_CONFLICT', details: { status: 'failed' } })
    expect(JSON.parse(readFileSync(join(dir, 'job.json'), 'utf8')).status).toBe('failed')
  })
})
