// Human checkpoints through the example's login: E_HUMAN_REQUIRED with a runnable resume and the published approval,
// single use, a bad id, expiry. In-process (test/support/in-process.ts), moved from test/cli/jobs/long-work.test.ts
// with every assertion kept.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

const box = useSandbox()

describe('human checkpoints', () => {
  it('login stops with E_HUMAN_REQUIRED, exit 9, and a runnable resume; resume after approval succeeds', async () => {
    const start = await tasks(box(), ['login'])
    expect(start.code).toBe(9)
    const error = env(start).error
    expect(error).toMatchObject({
      code: 'E_HUMAN_REQUIRED',
      retryable: false,
      details: { action: 'approve', url: expect.any(String), user_code: expect.any(String) },
    })
    // How a person approves it is published in the checkpoint, for the agent to relay as it is.
    const approval = error.details.approval
    expect(approval).toEqual({
      instructions: expect.stringContaining(approval.command),
      user_code: error.details.user_code,
      command: expect.stringMatching(new RegExp(` login approve ${error.details.user_code}$`)),
      expires_at: error.details.expires_at,
    })
    const resumeArgs = error.details.resume.split(' ').slice(1)
    const early = await tasks(box(), resumeArgs)
    expect(early.code).toBe(9)
    expect(env(early).error.details.resume).toBe(error.details.resume)
    // Not approved yet: the same approval again, from the checkpoint.
    expect(env(early).error.details.approval).toEqual(approval)
    // The person runs the published command (here the tool is on PATH, so it starts with `tasks`).
    const approveArgs = approval.command.split(' ').slice(1)
    expect((await tasks(box(), [...approveArgs, '--account', 'ann'])).code).toBe(0)
    const done = await tasks(box(), resumeArgs)
    expect(done.code).toBe(0)
    expect(env(done).data).toMatchObject({ account: 'ann', logged_in: true })
    const again = await tasks(box(), ['login'])
    expect(env(again).data).toMatchObject({ account: 'ann', logged_in: true })
    const reuse = await tasks(box(), resumeArgs)
    expect(reuse.code).toBe(6)
    expect(env(reuse).error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'checkpoint_used' } })
  })

  it('resume with a bad id fails clearly', async () => {
    const run = await tasks(box(), ['login', 'resume', '--id', 'cp_nope'])
    expect(run.code).toBe(3)
    expect(env(run).error).toMatchObject({ code: 'E_NOT_FOUND', details: { checkpoint_id: 'cp_nope' } })
  })

  it('an expired checkpoint is E_CONFLICT', async () => {
    const start = env(await tasks(box(), ['login'])).error
    const path = join(box().env.XDG_DATA_HOME!, 'tasks', 'checkpoints', `${start.details.checkpoint_id}.json`)
    const checkpoint = JSON.parse((await import('node:fs')).readFileSync(path, 'utf8'))
    writeFileSync(path, JSON.stringify({ ...checkpoint, expires_at: '2020-01-01T00:00:00.000Z' }))
    const run = await tasks(box(), start.details.resume.split(' ').slice(1))
    expect(run.code).toBe(6)
    expect(env(run).error.details.reason).toBe('checkpoint_expired')
  })
})
