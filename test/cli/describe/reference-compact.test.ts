import { describe, expect, it } from 'vitest'
import { TASKS_BIN, useSandbox } from '../../support/helpers.js'
import { onTerminal as terminal } from '../../support/terminal.js'

/*
 * The envelope's whitespace on a real terminal (a pty). The reference command and the rest of the JSON whitespace run
 * in-process: test/unit/describe/reference-command.test.ts.
 */
const box = useSandbox()

/** The example's stdout on a real terminal (a pty), line ends as sent. */
async function onTerminal(args: string): Promise<string> {
  const result = await terminal(`${process.execPath} ${TASKS_BIN} ${args}`, box().env)
  expect(result.status, result.stdout).toBe(0)
  return result.stdout.replaceAll('\r\n', '\n')
}

describe('JSON whitespace', () => {
  it('on a terminal the envelope is indented, and --compact puts it on one line', async () => {
    const pretty = await onTerminal('context --format json')
    expect(pretty.startsWith('{\n  "ok": true')).toBe(true)
    const compact = await onTerminal('context --format json --compact')
    expect(compact.trimEnd().split('\n')).toHaveLength(1)
    expect(JSON.parse(compact)).toMatchObject({ ok: true })
  })
})
