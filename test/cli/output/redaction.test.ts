// Command-level, adversarial tests of redaction that need the real bin: a command's own writes to the process's
// stderr and stdout (this.warn, process.stderr.write, a stray console.log) are scrubbed on their way out. Every other
// surface (JSON, text, raw, NDJSON, the audit log, files at rest) runs in-process:
// test/unit/output/redaction-surfaces.test.ts; the redactor itself: test/unit/output/redaction.test.ts.
import type { ToolRun } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, fixture, tasks, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const CANARY = 'canary-5e4d3c2b1a09f8e7'

function expectClean(runs: ToolRun[], ...secrets: string[]): void {
  for (const run of runs) for (const secret of secrets) expect(run.stdout + run.stderr).not.toContain(secret)
}

describe('prose with credential words round-trips on every surface', () => {
  it('in stderr lines and error details (a rejected value is echoed as given)', async () => {
    const text = await tasks(box(), ['list', '--status', 'token economy', '--format', 'text'])
    expect(text.code).toBe(2)
    expect(text.stderr).toContain("got: 'token economy'")
    const json = await tasks(box(), ['list', '--status', 'bearer bonds'])
    expect(env(json).error.details.got).toBe('bearer bonds')
    const warn = await fixture(box(), ['leak', '--api-key', CANARY, '--mode', 'warn', '--prose', 'basic training'])
    expect(env(warn).data.prose).toBe('basic training')
  })
})

describe('a secret passed in a sensitive flag never leaves the process', () => {
  it('stderr: this.warn, a direct write, a stray console.log', async () => {
    const run = await fixture(box(), ['leak', '--api-key', CANARY, '--mode', 'warn'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('direct stderr <redacted>')
    expect(run.stderr).toContain('stray stdout <redacted>')
    expectClean([run], CANARY)
  })
})
