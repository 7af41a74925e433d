import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createProgress, settleProgress } from '../../../src/output/progress.js'
import { downloadTo } from '../../../src/update/install.js'
import { env, FIXTURE_BIN, fixture, seed, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'

const box = useSandbox()

function sink(isTTY: boolean, columns = 60) {
  const writes: string[] = []
  return { writes, stream: { isTTY, columns, write: (s: string) => writes.push(s) } }
}

function clock() {
  let t = 0
  return { now: () => t, advance: (ms: number) => (t += ms) }
}

describe('progress, in-process', () => {
  it('on a terminal redraws one bar in place, rate-limited, and ends it with a newline', () => {
    const { writes, stream } = sink(true)
    const c = clock()
    const bar = createProgress({ label: 'copy', total: 10 }, { quiet: false, stream, now: c.now })
    for (let i = 0; i < 10; i++) bar.tick() // no time passes: only the first draw
    expect(writes).toHaveLength(1)
    c.advance(150)
    bar.update(5)
    expect(writes).toHaveLength(2)
    expect(writes[1]).toMatch(/^\r\u001b\[2Kcopy \[#+-+\] 50% 5\/10 eta 0s$/)
    bar.done()
    bar.tick()
    expect(writes).toHaveLength(3)
    expect(writes[2]).toMatch(/^\r\u001b\[2Kcopy \[#+-+\] 50% 5\/10 eta \d+s\n$/)
    for (const w of writes) expect(w.replace(/^\r\u001b\[2K/, '').trimEnd().length).toBeLessThanOrEqual(59)
  })

  it('off a terminal writes nothing for quick work, then a plain line per interval and a done line', () => {
    const quick = sink(false)
    const c = clock()
    const fast = createProgress({ label: 'sync', total: 3 }, { quiet: false, stream: quick.stream, now: c.now })
    fast.tick(3)
    fast.done()
    expect(quick.writes).toEqual([])

    const slow = sink(false)
    const bar = createProgress({ label: 'sync', total: 4 }, { quiet: false, stream: slow.stream, now: c.now })
    bar.tick()
    c.advance(2500)
    bar.tick()
    bar.tick() // within the interval: no line
    c.advance(2500)
    bar.tick()
    bar.done()
    expect(slow.writes).toEqual(['sync: 2/4 (50%) eta 3s\n', 'sync: 4/4 (100%)\n', 'sync: done, 4/4 in 5s\n'])
    expect(slow.writes.join('')).not.toMatch(/\u001b/)
  })

  it('counts bytes in binary units and works without a total', () => {
    const { writes, stream } = sink(false)
    const bar = createProgress({ label: 'fetch', unit: 'bytes', everyMs: 0 }, { quiet: false, stream })
    bar.tick(3 * 1024 * 1024)
    bar.done()
    expect(writes[0]).toBe('fetch: 3.0 MiB\n')
    expect(writes[1]).toMatch(/^fetch: done, 3\.0 MiB in \d+s\n$/)
  })

  it('a label cannot carry escape sequences to the terminal', () => {
    const { writes, stream } = sink(true)
    const bar = createProgress({ label: 'evil\u001b]0;title\u0007\u001b[2J', total: 1 }, { quiet: false, stream })
    bar.update(1, { label: 'again\u001b[31m' })
    bar.done()
    for (const w of writes) expect(w.replace(/^\r\u001b\[2K/, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
  })

  it('--quiet draws nothing at all', () => {
    const { writes, stream } = sink(true)
    const bar = createProgress({ label: 'x', total: 2 }, { quiet: true, stream })
    bar.tick()
    bar.done()
    expect(writes).toEqual([])
  })

  it('settleProgress ends an open bar before an error is printed', () => {
    const { writes, stream } = sink(true)
    createProgress({ label: 'x', total: 2 }, { quiet: false, stream })
    settleProgress()
    expect(writes.at(-1)).toMatch(/\n$/)
    settleProgress()
    expect(writes).toHaveLength(2)
  })

  it("update's download reports every byte it writes", async () => {
    const bytes = new Uint8Array(300_000).fill(7)
    let seen = 0
    const path = join(box().root, 'asset.tar.gz')
    await downloadTo(new Response(bytes), path, undefined, (n) => {
      seen += n
    })
    expect(seen).toBe(bytes.length)
    expect(readFileSync(path).length).toBe(bytes.length)
  })
})

describe('progress through the real bin', () => {
  it('off a TTY: plain lines on stderr, stdout the same envelope as with --quiet', async () => {
    const shown = await fixture(box(), ['work', '--n', '4'])
    expect(shown.code).toBe(0)
    expect(shown.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^work: 1\/4 \(25%\)/),
      expect.stringMatching(/^work: 2\/4 \(50%\)/),
      expect.stringMatching(/^work: 3\/4 \(75%\)/),
      'work: 4/4 (100%)',
      expect.stringMatching(/^work: done, 4\/4 in \d+s$/),
    ])
    expect(shown.stderr).not.toMatch(/\u001b|\r/)
    const quiet = await fixture(box(), ['work', '--n', '4', '--quiet'])
    expect(quiet.stderr).toBe('')
    expect({ ...env(shown), meta: null }).toEqual({ ...env(quiet), meta: null })
    expect(env(shown).data).toEqual({ steps: 4 })
  })

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

  it('a failure with the bar open: the error envelope on stdout, the last progress line before it on stderr', async () => {
    const run = await fixture(box(), ['work', '--n', '4', '--fail-at', '2'])
    expect(run.code).toBe(7)
    expect(env(run).error.code).toBe('E_SERVER')
    expect(run.stderr).toMatch(/^work: 1\/4 \(25%\).*\nwork: 2\/4 \(50%\).*\nwork: done, 2\/4 in \d+s\n$/)
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
    const job = env(await fixture(box(), ['sleepy', '--ms', '2600'])).data
    const waited = await fixture(box(), ['job', 'status', '--id', job.job_id, '--wait'])
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
    const waited = await fixture(box(), ['job', 'status', '--id', job.job_id, '--wait', '--wait-timeout', '1'])
    expect(waited.code).toBe(8)
    expect(env(waited).error).toMatchObject({
      code: 'E_TIMEOUT',
      retryable: true,
      // The fixture is not on PATH: the poll command starts the way the tool was started, runnable as printed.
      details: { job_id: job.job_id, poll: expect.stringMatching(/ job status --id /) },
    })
    const text = await fixture(box(), [
      'job',
      'status',
      '--id',
      job.job_id,
      '--wait',
      '--wait-timeout',
      '1',
      '--format',
      'text',
    ])
    expect(env(waited).error.details.poll).toMatch(
      new RegExp(`^\\S*node ${FIXTURE_BIN} job status --id ${job.job_id}$`),
    )
    expect(text.stderr).toContain(`next: ${env(waited).error.details.poll}`)
    expect(env(await fixture(box(), ['job', 'status', '--id', job.job_id])).data.status).toMatch(/pending|running/)
    await fixture(box(), ['job', 'cancel', '--id', job.job_id])
  })

  it.runIf(existsSync('/usr/bin/script'))(
    'the example import, waited for on a TTY: its job progress as a bar',
    async () => {
      const b = box()
      const file = join(b.root, 'tasks.jsonl')
      writeFileSync(file, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ title: `t${i}` })).join('\n'))
      const dry = env(await tasks(b, ['import', '--file', file, '--dry-run'])).data
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
      const after = await tasks(b, ['job', 'status', '--id', job.job_id, '--wait'])
      expect(env(after).data).toMatchObject({ status: 'succeeded', progress: 1 })
    },
  )
})
