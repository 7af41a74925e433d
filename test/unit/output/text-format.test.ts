import { describe, expect, it } from 'vitest'
import { displayWidth } from '../../../src/output/width.js'
import { seed, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * --format text of whole calls, in-process (test/support/in-process.ts); on a terminal (`script`):
 * test/cli/output/text-format.test.ts.
 */
const box = useSandbox()
const ANSI = /\u001b\[/
const CJK = '写文档并且检查所有的例子是否可以运行'
const LONG = 'A very long title that goes on and on and on and on and on and on and on and on forever'

function seedMixed() {
  seed(box(), [
    { id: '1', title: 'Write the docs' },
    { id: '2', title: CJK },
    { id: '3', title: '🎉 party time 👍🏽 with emoji' },
    { id: '4', title: LONG },
  ])
}

/** The display column at which `word` starts in `line`. */
function columnOf(line: string, word: string): number {
  return displayWidth(line.slice(0, line.indexOf(word)))
}

// The layout logic (widths, nesting, next commands) is tested in-process in text-layout.unit.test.ts.
describe('--format text of whole calls', () => {
  it('a table fits COLUMNS on a pipe, aligned by display width, CJK cut with an ellipsis, no ANSI', async () => {
    seedMixed()
    for (const columns of [50, 72, 100]) {
      const run = await tasks(box(), ['list', '--format', 'text'], { env: { COLUMNS: String(columns) } })
      expect(run.code).toBe(0)
      expect(run.stdout).not.toMatch(ANSI)
      const lines = run.stdout.trimEnd().split('\n')
      for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(columns)
      expect(lines[0]).toMatch(/^ID +TITLE +STATUS +CREATED/)
      // Every row starts its STATUS cell at the header's column, whatever wide text the title cell before it holds.
      for (const row of lines.slice(1, 5)) expect(columnOf(row, ' open ') + 1, row).toBe(columnOf(lines[0]!, 'STATUS'))
      if (columns < 100) expect(run.stdout).toContain('…')
    }
  })

  it('without COLUMNS off a TTY the width is 80', async () => {
    seedMixed()
    const run = await tasks(box(), ['list', '--format', 'text'])
    const widths = run.stdout.trimEnd().split('\n').map(displayWidth)
    expect(Math.max(...widths)).toBeLessThanOrEqual(80)
    expect(Math.max(...widths)).toBeGreaterThan(70)
  })

  it('a terminal too narrow for the columns gets records instead of a crushed table', async () => {
    seedMixed()
    const run = await tasks(box(), ['list', '--format', 'text', '--limit', '2'], { env: { COLUMNS: '30' } })
    expect(run.stdout).toMatch(/^-- 1 --\nid +1\ntitle +Write the docs\n/)
    // A cursor (MAC-checked, so longer than 30 columns) is printed whole so that it can be copied, never broken.
    const [cursorLine, ...rest] = run.stdout
      .trimEnd()
      .split('\n')
      .sort((a, b) => Number(b.startsWith('next_cursor')) - Number(a.startsWith('next_cursor')))
    expect(cursorLine).toMatch(/^next_cursor: c2\.\S+$/)
    for (const line of rest) expect(displayWidth(line), line).toBeLessThanOrEqual(30)
  })

  it('a stream is a width-fitted table too', async () => {
    seedMixed()
    const run = await tasks(box(), ['export', '--format', 'text'], { env: { COLUMNS: '60' } })
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID +TITLE +STATUS/)
    expect(lines).toHaveLength(5)
    for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(60)
  })

  it('a dry-run preview summarises nested values and keeps the confirm token whole on one line', async () => {
    const run = await tasks(box(), ['create', '--title', 'hello', '--dry-run', '--format', 'text'], {
      env: { COLUMNS: '100' },
    })
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/after/i)
    expect(run.stdout).toContain('{title: hello, status: open}')
    expect(run.stdout).not.toContain('{"')
    const token = /confirm_token: +(\S+)\n/.exec(run.stdout)?.[1]
    expect(token).toMatch(/^ct_[\w.-]{60,}$/)
    const json = await tasks(box(), ['create', '--title', 'hello', '--dry-run'])
    expect(token!.length).toBe((json.json as { data: { confirm_token: string } }).data.confirm_token.length)
  })

  it('a page footer keeps next_cursor whole, however narrow the terminal', async () => {
    seedMixed()
    const run = await tasks(box(), ['list', '--limit', '1', '--format', 'text'], { env: { COLUMNS: '20' } })
    const json = await tasks(box(), ['list', '--limit', '1'])
    expect(run.stdout).toContain(`next_cursor: ${(json.json as { data: { next_cursor: string } }).data.next_cursor}\n`)
  })

  it('an error names the next command to run: the dry-run for a write without a token', async () => {
    const run = await tasks(box(), ['create', '--title', 'hello', '--format', 'text'])
    expect(run.code).toBe(5)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(
      /^error E_CONFIRMATION_REQUIRED: .*\nnext: tasks create --title hello --format text --dry-run\n/,
    )
  })

  it('a refused token prints the dry-run to run next, then its fix', async () => {
    const run = await tasks(box(), ['create', '--title', 'x', '--confirm', 'forged.token', '--format', 'text'])
    expect(run.code).toBe(6)
    expect(run.stderr).toMatch(
      /^error E_CONFLICT: confirm token refused.*\nnext: tasks create --title x --format text --dry-run\nfix: run the command again with --dry-run/,
    )
  })
})
