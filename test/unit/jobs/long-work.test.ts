// Long work that needs no worker: an unknown job id, an import's token bound to the file, a missing file. In-process
// (test/support/in-process.ts), moved from test/cli/jobs/long-work.test.ts with every assertion kept; what a detached
// worker runs stays there.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, tasksInProcess as tasks } from '../../support/in-process.js'

const box = useSandbox()

describe('async jobs', () => {
  it('an unknown job id is E_NOT_FOUND', async () => {
    for (const args of [
      ['job', 'status', '--id', 'job_nope'],
      ['job', 'result', '--id', 'job_00000000000000000000'],
      ['job', 'cancel', '--id', '../etc'],
    ]) {
      const run = await fixture(box(), args)
      expect(run.code).toBe(3)
      expect(env(run).error.code).toBe('E_NOT_FOUND')
    }
  })
})

describe('tasks import (an async write job)', () => {
  function file(b: Sandbox, text: string): string {
    const path = join(b.root, 'in.jsonl')
    writeFileSync(path, text)
    return path
  }

  it('the token is bound to the file content', async () => {
    const path = file(box(), '{"title":"a"}\n')
    const dry = await tasks(box(), ['import', '--file', path, '--dry-run'])
    writeFileSync(path, '{"title":"b"}\n')
    const run = await tasks(box(), ['import', '--file', path, '--confirm', env(dry).data.confirm_token])
    expect(env(run).error.details.reason).toBe('state_drift')
  })

  it('a missing file is E_NOT_FOUND', async () => {
    const run = await tasks(box(), ['import', '--file', join(box().root, 'nope.jsonl'), '--dry-run'])
    expect(run.code).toBe(3)
  })
})
