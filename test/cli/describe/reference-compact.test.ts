import { spawnSync } from 'node:child_process'
import { dirname } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TASKS_BIN, useSandbox } from '../../support/helpers.js'

/*
 * The envelope's whitespace on a real terminal (a pty). The reference command and the rest of the JSON whitespace run
 * in-process: test/unit/describe/reference-command.test.ts.
 */
const box = useSandbox()

/** The example's stdout on a real terminal (util-linux `script` gives it a pty), line ends as sent. */
function onTerminal(args: string): string {
  const result = spawnSync('sh', ['-c', `sleep 2 | script -qec "${process.execPath} ${TASKS_BIN} ${args}" /dev/null`], {
    encoding: 'utf8',
    env: { ...box().env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, NO_COLOR: '1' },
    timeout: 15_000,
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.replaceAll('\r\n', '\n')
}

describe('JSON whitespace', () => {
  it('on a terminal the envelope is indented, and --compact puts it on one line', () => {
    const pretty = onTerminal('context --format json')
    expect(pretty.startsWith('{\n  "ok": true')).toBe(true)
    const compact = onTerminal('context --format json --compact')
    expect(compact.trimEnd().split('\n')).toHaveLength(1)
    expect(JSON.parse(compact)).toMatchObject({ ok: true })
  })
})
