// Progress: the bar itself (a fake stream and clock), and through the fixture off a terminal. In-process
// (test/support/in-process.ts), moved from the spawn tier with every assertion kept; the terminal cases (a pty), the
// default interval (timing) and the job waits (a worker) stay in test/cli/output/progress.test.ts.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createProgress, settleProgress } from '../../../src/output/progress.js'
import { downloadTo } from '../../../src/update/install.js'
import { env, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture } from '../../support/in-process.js'

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

  it('a failure with the bar open: the error envelope on stdout, the last progress line before it on stderr', async () => {
    const run = await fixture(box(), ['work', '--n', '4', '--fail-at', '2'])
    expect(run.code).toBe(7)
    expect(env(run).error.code).toBe('E_SERVER')
    expect(run.stderr).toMatch(/^work: 1\/4 \(25%\).*\nwork: 2\/4 \(50%\).*\nwork: done, 2\/4 in \d+s\n$/)
  })
})
