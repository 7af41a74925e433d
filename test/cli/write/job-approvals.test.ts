// The worker of an async write is a process an agent can start itself (`tasks job worker --id <id>`) on a record it
// can write itself (issue 24): a forged record for an import the policy holds (above 5,000 lines, rule
// `large-import`) is refused by the worker, nothing imported; the same import approved by a person's real ssh-keygen
// key is applied once, and its record replayed once its request has expired is refused. The decisions are tested
// in-process over fake steps in test/unit/write/job-check.test.ts.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeRequest } from '../../../src/approvals/request.js'
import { fileJobStore, newJobId } from '../../../src/jobs/file-store.js'
import type { JobPlan } from '../../../src/jobs/types.js'
import { env, jobRecord, seed, shiftedClock, storeBytes, tasks, useSandbox } from '../../support/helpers.js'
import { tasksInProcess, tasksJobDone } from '../../support/in-process.js'
import { sshKeys } from '../../support/ssh-keys.js'

const box = useSandbox()
const keys = sshKeys()
afterAll(() => keys.dispose())
const alice = keys.make('alice')
const LINES = 5001

const dataDir = (b: Sandbox) => join(b.env.XDG_DATA_HOME!, 'tasks')
const taskCount = (b: Sandbox) => JSON.parse(storeBytes(b)).tasks.length as number

/** Two tasks, alice as the operator's approver, and a file of 5,001 tasks to import: held by `large-import`. */
function prepare(b: Sandbox): string {
  seed(b, [
    { id: '1', title: 'one' },
    { id: '2', title: 'two' },
  ])
  const config = join(b.env.XDG_CONFIG_HOME!, 'tasks')
  mkdirSync(config, { recursive: true, mode: 0o700 })
  writeFileSync(join(config, 'policy.json'), JSON.stringify({ approvers: [{ id: 'alice', key: alice.pub }] }), {
    mode: 0o600,
  })
  const path = join(b.root, 'big.jsonl')
  writeFileSync(path, Array.from({ length: LINES }, (_, i) => `{"title":"imported ${i}"}\n`).join(''))
  return path
}

/** The held dry-run: its token and the approval request, all an agent learns without an approver's key. */
async function heldDryRun(b: Sandbox, path: string): Promise<{ token: string; request: string }> {
  const run = await tasksInProcess(b, ['import', '--file', path, '--dry-run'])
  expect(run.code, run.stdout + run.stderr).toBe(0)
  const { confirm_token, approval } = env(run).data
  expect(approval.rule).toBe('large-import')
  return { token: confirm_token, request: approval.request }
}

/** A pending job written straight into the data dir, as the agent can, then the worker run on it as a process. */
async function forgeAndWork(b: Sandbox, path: string, plan: JobPlan, extraEnv: Record<string, string> = {}) {
  const id = newJobId()
  await fileJobStore(dataDir(b)).create(jobRecord({ job_id: id, command: 'import', argv: ['--file', path], plan }))
  const run = await tasks(b, ['job', 'worker', '--id', id], { env: extraEnv })
  expect(run.stderr).not.toMatch(/Error/)
  return tasksJobDone(b, id)
}

describe("an async write's worker judges the policy and the approvals again", () => {
  it('refuses a forged job record for a held import: nothing imported', async () => {
    const b = box()
    const path = prepare(b)
    const before = storeBytes(b)
    const { request } = await heldDryRun(b, path)
    const held = decodeRequest(request)!
    const targets = held.request.targets.map(([id, version]) => ({ id, version }))
    // The auditor's record: the targets and versions and the policy digest, all readable by the agent.
    const bare = await forgeAndWork(b, path, { token_id: held.request.token_id, targets, policy: held.request.policy })
    expect(bare).toMatchObject({
      status: 'failed',
      error: { code: 'E_CONFLICT', details: { reason: 'unverified_job' } },
    })
    // Everything the held request names copied into the record: the request is recomputed, and nobody approved it.
    const full = await forgeAndWork(b, path, {
      token_id: held.request.token_id,
      targets,
      policy: held.request.policy,
      expires_at: held.request.expires_at,
      principal: held.request.principal,
    })
    expect(full).toMatchObject({
      status: 'failed',
      error: {
        code: 'E_FORBIDDEN',
        details: { reason: 'approval_required', rule: 'large-import', request_id: held.id },
      },
    })
    expect(storeBytes(b)).toBe(before)
  })

  it('applies a held import approved with a real key once; its record replayed after the expiry is refused', async () => {
    const b = box()
    const path = prepare(b)
    const { token, request } = await heldDryRun(b, path)
    expect((await tasksInProcess(b, ['import', '--file', path, '--confirm', token])).code).toBe(9)
    const signed = await tasksInProcess(b, ['approve', request, '--key', alice.path])
    expect(signed.code, signed.stdout + signed.stderr).toBe(0)
    const submit = await tasks(b, ['import', '--file', path, '--confirm', token])
    expect(submit.code, submit.stdout + submit.stderr).toBe(0)
    const id = env(submit).data.job_id as string
    expect(await tasksJobDone(b, id)).toMatchObject({ status: 'succeeded' })
    expect(taskCount(b)).toBe(2 + LINES)
    const again = await tasksInProcess(b, ['import', '--file', path, '--confirm', token])
    expect(env(again).error.details.reason).toBe('already_used')
    // The approved job's record run again as a new job, by a worker after the request's expiry (10 minutes).
    const record = JSON.parse(readFileSync(join(dataDir(b), 'jobs', id, 'job.json'), 'utf8'))
    const replay = await forgeAndWork(b, path, record.plan, shiftedClock(11 * 60_000))
    expect(replay).toMatchObject({
      status: 'failed',
      error: { code: 'E_FORBIDDEN', details: { reason: 'approval_expired', rule: 'large-import' } },
    })
    expect(taskCount(b)).toBe(2 + LINES)
  })
})
