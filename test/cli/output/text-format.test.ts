import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { displayWidth } from '../../../src/output/width.js'
import { seed, TASKS_BIN, useSandbox } from '../../support/helpers.js'

/*
 * --format text on a terminal (`script`). Off one, whole calls run in-process: test/unit/output/text-format.test.ts.
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

// The layout logic (widths, nesting, next commands) is tested in-process in text-layout.unit.test.ts.
const SCRIPT = existsSync('/usr/bin/script') ? '/usr/bin/script' : undefined

describe.runIf(SCRIPT)('--format text on a TTY', () => {
  function onTty(columns: number, args: string): string {
    const b = box()
    seedMixed()
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', TERM: 'xterm', ...b.env }
    const command = `stty cols ${columns} rows 40; ${JSON.stringify(process.execPath)} ${TASKS_BIN} ${args}`
    const run = spawnSync(SCRIPT!, ['-qec', command, '/dev/null'], { env, encoding: 'utf8', timeout: 20_000 })
    expect(run.status).toBe(0)
    return run.stdout.replaceAll('\r\n', '\n')
  }

  it('takes the width from the terminal, not COLUMNS, and bolds the header', () => {
    const out = onTty(64, 'list --format text')
    expect(out).toContain('\u001b[1mID')
    const plain = out.replace(/\u001b\[\d+m/g, '')
    const lines = plain.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID +TITLE/)
    for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(64)
    expect(Math.max(...lines.map(displayWidth))).toBeGreaterThan(56)
  })

  it('a stream on a terminal: the same width and a bold header', () => {
    const out = onTty(50, 'export --format text')
    expect(out).toContain('\u001b[1mID')
    const lines = out
      .replace(/\u001b\[\d+m/g, '')
      .trimEnd()
      .split('\n')
    expect(lines).toHaveLength(5)
    for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(50)
  })

  it('NO_COLOR keeps escape codes off a TTY too', () => {
    const b = box()
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', TERM: 'xterm', NO_COLOR: '1', ...b.env }
    const run = spawnSync(
      SCRIPT!,
      ['-qec', `stty cols 80; ${JSON.stringify(process.execPath)} ${TASKS_BIN} list --format text`, '/dev/null'],
      { env, encoding: 'utf8', timeout: 20_000 },
    )
    expect(run.stdout).not.toMatch(ANSI)
  })
})
