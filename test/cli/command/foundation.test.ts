import { envelopeViolations } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, fixture, useSandbox } from '../../support/helpers.js'

/*
 * One envelope for every outcome where the fixture reads process.env itself (its hooks and commands) or an
 * unhandled rejection needs the process's handler. The rest runs in-process: test/unit/command/foundation.test.ts.
 */
const box = useSandbox()

describe('every outcome is one envelope', () => {
  it('an unhandled rejection is E_INTERNAL', async () => {
    const run = await fixture(box(), ['reject'])
    expect(run.code).toBe(1)
    expect(env(run).error.code).toBe('E_INTERNAL')
  })

  it('an init hook that throws is one envelope', async () => {
    const run = await fixture(box(), ['chatty'], { env: { FIXTURE_HOOK_THROW: '1' } })
    expect(run.code).toBe(1)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run).error.message).toContain('init hook failed')
  })

  it('keeps hook output, console.log, warnings and logs off stdout', async () => {
    const run = await fixture(box(), ['chatty'], { env: { FIXTURE_HOOK_LOG: '1' } })
    expect(run.code).toBe(0)
    expect(env(run).data).toEqual({ said: 'hi', when: '1970-01-01T00:00:00.000Z' })
    expect(run.stderr).toContain('hook says hello on stdout')
    expect(run.stderr).toContain('stray console.log')
    expect(run.stderr).toContain('warning: a warning')
  })
})

describe('the error catalogue', () => {
  it('an undeclared code is reported as E_INTERNAL naming it', async () => {
    const run = await fixture(box(), ['quota'], { env: { FIXTURE_UNDECLARED: '1' } })
    expect(run.code).toBe(1)
    expect(env(run).error).toMatchObject({ code: 'E_INTERNAL', details: { undeclared_code: 'E_NOT_DECLARED' } })
  })
})
