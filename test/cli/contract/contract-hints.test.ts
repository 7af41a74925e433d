import { spawnSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'

/*
 * Hints run exactly as printed (a shell, PATH, the bin; a job's poll). The rest runs in-process:
 * test/unit/contract/contract-hints.test.ts.
 */
const box = useSandbox()
/** PATH with this Node and the system tools, and no `tasks` on it. */
const BARE_PATH = `${dirname(process.execPath)}:/usr/bin:/bin`

/** PATH on which `tasks` resolves (through a symlink, as npm links bins) to the example's bin. */
function pathWithTasks(): string {
  const dir = join(box().root, 'bin')
  mkdirSync(dir, { recursive: true })
  symlinkSync(TASKS_BIN, join(dir, 'tasks'))
  return `${dir}:${BARE_PATH}`
}

/** Run a printed hint as a shell would, with the same PATH and sandbox the tool ran with. */
function runHint(command: string, path: string): { code: number | null; json: { ok: boolean; data?: unknown } } {
  const r = spawnSync('/bin/sh', ['-c', `${command} --compact`], {
    encoding: 'utf8',
    env: { ...box().env, PATH: path },
  })
  return { code: r.status, json: JSON.parse(r.stdout) }
}

describe('next-step hints run exactly as printed', () => {
  it('off PATH, dry_run_command starts with node and the absolute script, and runs', async () => {
    const run = await tasks(box(), ['create', '--title', 'a b'], { env: { PATH: BARE_PATH } })
    expect(run.code).toBe(5)
    const hint = env(run).error.details.dry_run_command as string
    expect(hint).toBe(`node ${TASKS_BIN} create --title 'a b' --dry-run`)
    const dry = runHint(hint, BARE_PATH)
    expect(dry.code).toBe(0)
    expect(dry.json).toMatchObject({ ok: true, data: { confirm_token: expect.stringMatching(/^ct_/) } })
  })

  it("when PATH's node is another Node (or none), the hint names this Node by its absolute path, and runs", async () => {
    const run = await tasks(box(), ['create', '--title', 'x'], { env: { PATH: '/nonexistent' } })
    const hint = env(run).error.details.dry_run_command as string
    expect(hint).toBe(`${process.execPath} ${TASKS_BIN} create --title x --dry-run`)
    expect(runHint(hint, '/nonexistent').code).toBe(0)
  })

  it('on PATH, the hint is the bin name, and runs', async () => {
    const path = pathWithTasks()
    const run = await tasks(box(), ['create', '--title', 'x'], { env: { PATH: path } })
    const hint = env(run).error.details.dry_run_command as string
    expect(hint).toBe('tasks create --title x --dry-run')
    expect(runHint(hint, path).code).toBe(0)
  })

  it("a job's poll and result, a checkpoint's resume, and the text error's next: line all run as printed", async () => {
    const file = join(box().root, 'in.jsonl')
    writeFileSync(file, '{"title":"a"}\n')
    const opts = { env: { PATH: BARE_PATH } }
    const dry = env(await tasks(box(), ['import', '--file', file, '--dry-run'], opts)).data
    const job = env(await tasks(box(), ['import', '--file', file, '--confirm', dry.confirm_token], opts)).data
    expect(job.poll).toBe(`node ${TASKS_BIN} job status --id ${job.job_id}`)
    expect(runHint(`${job.poll} --wait`, BARE_PATH)).toMatchObject({ code: 0, json: { data: { status: 'succeeded' } } })
    expect(runHint(job.result, BARE_PATH)).toMatchObject({ code: 0, json: { data: { imported: 1 } } })
    const login = env(await tasks(box(), ['login'], opts)).error
    expect(login.code).toBe('E_HUMAN_REQUIRED')
    expect(login.details.resume).toMatch(new RegExp(`^node ${TASKS_BIN} login resume --id cp_`))
    expect(runHint(login.details.resume, BARE_PATH).json).toMatchObject({ ok: false })
    const text = await tasks(box(), ['create', '--title', 'x', '--format', 'text'], opts)
    expect(text.stderr).toContain(`next: node ${TASKS_BIN} create --title x --format text --dry-run`)
  })

  it('off PATH, a not-found hint, a refused token and a --wait answer name commands as the agent can run them', async () => {
    const opts = { env: { PATH: BARE_PATH } }
    const missing = env(await tasks(box(), ['get', '99'], opts)).error
    expect(missing.code).toBe('E_NOT_FOUND')
    expect(missing.details.hint).toContain(`\`node ${TASKS_BIN} list\``)
    const refused = env(await tasks(box(), ['create', '--title', 'x', '--confirm', 'ct_3.AAAA.BBBB'], opts)).error
    expect(refused).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'tampered' } })
    expect(refused.details.dry_run_command).toBe(`node ${TASKS_BIN} create --title x --dry-run`)
    expect(runHint(refused.details.dry_run_command, BARE_PATH).json).toMatchObject({
      data: { confirm_token: expect.stringMatching(/^ct_3\./) },
    })
  })
})
