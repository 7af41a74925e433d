import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { NEEDS_REFERENCE } from '../../../src/verify/generic.js'
import { env, ROOT } from '../../support/helpers.js'

// A target without `reference` (not built on agentcli) still gets every check that does not need one; the rest
// are listed as not applicable, with the reason. The plain fixture keeps those rules; each wrapper breaks one.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const plain = (name: string) => join(ROOT, `test/fixtures/plain/${name}.mjs`)
type Check = { id: string; group: string; status: string; evidence: string }

const verify = async (name: string, extra: string[] = []) => {
  const run = await runTool(AGENTCLI, ['verify', ...extra, '--', process.execPath, plain(name)], {
    timeoutMs: 60_000,
    validateOutput: true,
  })
  expect(run.code).toBe(1)
  expect(env(run).error.code).toBe('E_CONFORMANCE')
  return env(run).error.details.checks as Check[]
}
const failed = (checks: Check[]) =>
  checks
    .filter((c) => c.status === 'fail')
    .map((c) => c.id)
    .sort()

describe('agentcli verify on a CLI without reference', () => {
  it('says --fuzz was not run, and why, instead of dropping it', async () => {
    const checks = await verify('cli', ['--fuzz', '20'])
    expect(checks.find((c) => c.id === 'fuzz.invariants')).toMatchObject({
      status: 'skip',
      evidence: expect.stringContaining('reference'),
    })
  })

  it('runs every reference-free check, and says which checks could not apply and why', async () => {
    const checks = await verify('cli')
    // Only the missing reference itself fails: everything else it can be held to, it keeps.
    expect(failed(checks)).toEqual(['self.reference_keys'])
    const passed = checks.filter((c) => c.status === 'pass').map((c) => c.id)
    for (const id of [
      'exit.unknown_command',
      'exit.unknown_flag',
      'flags.help',
      'stdio.quiet_stderr',
      'stdio.utf8',
      'stdio.no_ansi',
      'envelope.no_decoration',
      'exit.catalogue',
      'interactive.timeouts',
      'envelope:unknown command',
      'envelope:--version --quiet',
    ])
      expect(passed).toContain(id)
    const skipped = checks.filter((c) => c.status === 'skip')
    expect(skipped.map((c) => c.id).sort()).toEqual([...NEEDS_REFERENCE].sort())
    for (const c of skipped)
      expect(c.evidence).toMatch(/^not applicable: `reference` did not describe the target \(exit 2/)
  }, 60_000)

  it('fails colour off a TTY when TERM invites it', async () => {
    const checks = await verify('ansi')
    expect(failed(checks)).toEqual(['self.reference_keys', 'stdio.no_ansi'])
    expect(checks.find((c) => c.id === 'stdio.no_ansi')!.evidence).toContain('colour --help (stdout)')
  }, 60_000)

  it('fails an emoji or an ANSI colour in an error message or hint, which JSON escapes out of the bytes', async () => {
    const checks = await verify('decorated')
    expect(failed(checks)).toEqual(['envelope.no_decoration', 'self.reference_keys'])
    const evidence = checks.find((c) => c.id === 'envelope.no_decoration')!.evidence
    // The first call (`reference`) already shows it; JSON.stringify in the evidence writes the escape as text.
    expect(evidence).toContain('reference: error.message "❌ \\u001b[31munknown command reference')
    expect(evidence).toContain('details.hint "💡 try --help"')
  }, 60_000)

  it('fails a BOM', async () => {
    const checks = await verify('bom')
    expect(failed(checks)).toEqual(['self.reference_keys', 'stdio.utf8'])
    expect(checks.find((c) => c.id === 'stdio.utf8')!.evidence).toContain('--help: BOM')
  }, 60_000)

  it('fails stderr chatter that --quiet does not silence', async () => {
    const checks = await verify('stderr')
    expect(failed(checks)).toEqual(['self.reference_keys', 'stdio.quiet_stderr'])
    expect(checks.find((c) => c.id === 'stdio.quiet_stderr')!.evidence).toBe(
      '--version --quiet wrote to stderr: "plain: starting\\n"',
    )
  }, 60_000)
})
