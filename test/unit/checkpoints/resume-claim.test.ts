// A human checkpoint's resume that did not finish hands its claim back, and a claim left by a dead process is taken
// over. In-process (test/support/in-process.ts), moved from test/cli/jobs/jobs-robust.test.ts with every assertion
// kept; parallel resumes (processes racing) stay there.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

const box = useSandbox()

describe('a human checkpoint is single-use', () => {
  it('a resume that did not finish hands its claim back: the next resume still works', async () => {
    const start = env(await tasks(box(), ['login'])).error
    const resume = start.details.resume.split(' ').slice(1)
    const early = await tasks(box(), [...resume, '--insecure-storage'])
    expect(env(early).error.code).toBe('E_HUMAN_REQUIRED')
    const claim = join(box().env.XDG_DATA_HOME!, 'tasks', 'checkpoints', `${start.details.checkpoint_id}.claim`)
    expect(() => readFileSync(claim)).toThrow()
    // A claim left by a process that died (a PID that is not running) is taken over.
    writeFileSync(claim, JSON.stringify({ pid: 2 ** 22 + 7, start: '1', nonce: 'dead' }))
    expect((await tasks(box(), ['login', 'approve', start.details.user_code, '--account', 'bo'])).code).toBe(0)
    const done = await tasks(box(), [...resume, '--insecure-storage'])
    expect(done.code, done.stdout).toBe(0)
    expect(env(done).data).toMatchObject({ account: 'bo', logged_in: true })
  })
})
