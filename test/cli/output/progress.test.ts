import { spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, FIXTURE_BIN, fixture, seed, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess, tasksInProcess } from '../../support/in-process.js'

/*
 * Progress where the process matters: on a terminal (a pty), the default interval (a quick run prints nothing) and
 * job waits (a worker). The bar itself and the fixture off a terminal run in-process:
 * test/unit/output/progress.test.ts.
 */
const box = useSandbox()

describe('progress through the real bin', () => {
  it('quick work prints nothing off a TTY with the default interval', async () => {
    const run = await fixture(box(), ['work', '--n', '3', '--every-ms', '2000'])
    expect(run.stderr).toBe('')
    seed(
      box(),
      Array.from({ length: 50 }, (_, i) => ({ id: String(i + 1), title: `t${i}` })),
    )
    const exported = await tasks(box(), ['export'])
    expect(exported.stderr).toBe('')
    expect(exported.stdout.trimEnd().split('\n')).toHaveLength(51)
  })

  it.runIf(existsSync('/usr/bin/script'))('on a TTY: a bar redrawn in place on stderr', () => {
    const b = box()
    const command = `stty cols 70; ${JSON.stringify(process.execPath)} ${FIXTURE_BIN} work --n 4 --format text 2>&1 >/dev/null`
    const run = spawnSync('/usr/bin/script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...b.env },
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(run.status).toBe(0)
    expect(run.stdout).toContain('\r\u001b[2Kwork [')
    expect(run.stdout).toMatch(/100% 4\/4\r?\n/)
    const quiet = spawnSync(
      '/usr/bin/script',
      ['-qec', command.replace('--format text', '--format text --quiet'), '/dev/null'],
      { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...b.env }, encoding: 'utf8', timeout: 20_000 },
    )
    expect(quiet.stdout).toBe('')
  })

  it('job status --wait blocks until the job settles, with progress lines off a TTY and the final state on stdout', async () => {
    // The job settles only once the wait has printed a line: however slow the machine, the wait sees it running.
    const release = join(box().root, 'release')
    const job = env(await fixture(box(), ['sleepy', '--ms', '600', '--hold', release])).data
    const waited = await fixture(box(), ['job', 'status', '--id', job.job_id, '--wait'], {
      onSpawn: (child) => child.stderr?.once('data', () => writeFileSync(release, '')),
    })
    expect(waited.code).toBe(0)
    expect(env(waited).data).toMatchObject({ job_id: job.job_id, status: 'succeeded', progress: 1 })
    const lines = waited.stderr.split('\n').filter(Boolean)
    expect(lines[0]).toMatch(new RegExp(`^${job.job_id}: \\d+/100 \\(\\d+%\\)`))
    expect(lines.at(-1)).toMatch(new RegExp(`^${job.job_id}: done, 100/100 in \\ds$`))
    const quiet = await fixture(box(), ['job', 'status', '--id', job.job_id, '--wait', '--quiet'])
    expect(quiet.stderr).toBe('')
    expect(env(quiet).data.status).toBe('succeeded')
  })

  it('job status --wait past --wait-timeout is E_TIMEOUT naming the poll command; the job keeps running', async () => {
    const job = env(await fixture(box(), ['sleepy', '--ms', '20000'])).data
    // The two waits (json, text) run side by side: each gives up after its own second.
    const [waited, text] = await Promise.all([
      fixture(box(), ['job', 'status', '--id', job.job_id, '--wait', '--wait-timeout', '1']),
      fixture(box(), ['job', 'status', '--id', job.job_id, '--wait', '--wait-timeout', '1', '--format', 'text']),
    ])
    expect(waited.code).toBe(8)
    expect(env(waited).error).toMatchObject({
      code: 'E_TIMEOUT',
      retryable: true,
      // The fixture is not on PATH: the poll command starts the way the tool was started, runnable as printed.
      details: { job_id: job.job_id, poll: expect.stringMatching(/ job status --id /) },
    })
    expect(env(waited).error.details.poll).toMatch(
      new RegExp(`^\\S*node ${FIXTURE_BIN} job status --id ${job.job_id}$`),
    )
    expect(text.stderr).toContain(`next: ${env(waited).error.details.poll}`)
    expect(env(await fixtureInProcess(box(), ['job', 'status', '--id', job.job_id])).data.status).toMatch(
      /pending|running/,
    )
    await fixtureInProcess(box(), ['job', 'cancel', '--id', job.job_id])
  })

  it.runIf(existsSync('/usr/bin/script'))(
    'the example import, waited for on a TTY: its job progress as a bar',
    async () => {
      const b = box()
      const file = join(b.root, 'tasks.jsonl')
      writeFileSync(file, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ title: `t${i}` })).join('\n'))
      const dry = env(await tasksInProcess(b, ['import', '--file', file, '--dry-run'])).data
      const job = env(await tasks(b, ['import', '--file', file, '--confirm', dry.confirm_token])).data
      const command = `stty cols 80; ${JSON.stringify(process.execPath)} ${TASKS_BIN} job status --id ${job.job_id} --wait --fields status 2>&1 >/dev/null`
      const run = spawnSync('/usr/bin/script', ['-qec', command, '/dev/null'], {
        env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...b.env },
        encoding: 'utf8',
        timeout: 30_000,
      })
      expect(run.status).toBe(0)
      expect(run.stdout).toContain(`\r\u001b[2K${job.job_id}`)
      expect(run.stdout).toMatch(/100% 100\/100\r?\n/)
      const after = await tasksInProcess(b, ['job', 'status', '--id', job.job_id, '--wait'])
      expect(env(after).data).toMatchObject({ status: 'succeeded', progress: 1 })
    },
  )
})
