// The example's approvals through the real bin (what only a process shows: the package.json defaults, the operator's
// file on disk, the `approve` command signing with ssh-keygen, the environment). The decisions themselves are
// tested in-process in test/unit/policy and test/unit/approvals.
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { env, seed, storeBytes, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'
import { sshKeys } from '../../support/ssh-keys.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()
const keys = sshKeys()
afterAll(() => keys.dispose())
const alice = keys.make('alice')
const mallory = keys.make('mallory')

const configDir = (b: Sandbox) => join(b.env.XDG_CONFIG_HOME!, 'tasks')

function operatorPolicy(b: Sandbox, doc: unknown, mode = 0o600): string {
  mkdirSync(configDir(b), { recursive: true, mode: 0o700 })
  const path = join(configDir(b), 'policy.json')
  rmSync(path, { force: true })
  writeFileSync(path, JSON.stringify(doc), { mode })
  chmodSync(path, mode)
  return path
}

const five = () => ['1', '2', '3', '4', '5'].map((id) => ({ id, title: `task ${id}` }))

async function heldDryRun(b: Sandbox, ids: string[], extra: Record<string, string> = {}) {
  const run = await tasks(b, ['delete', ...ids, '--dry-run'], { env: extra })
  expect(run.code, run.stdout + run.stderr).toBe(0)
  const data = env(run).data
  return { token: data.confirm_token as string, approval: data.approval as { request: string; rule: string } }
}

describe('approvals in the example tool', () => {
  it('holds a delete of more than three tasks until an approver signs; then applies it once', async () => {
    const b = box()
    seed(b, five())
    operatorPolicy(b, { approvers: [{ id: 'alice', key: alice.pub }] })
    const { token, approval } = await heldDryRun(b, ['1', '2', '3', '4'])
    expect(approval.rule).toBe('bulk-delete')
    const before = storeBytes(b)
    // The agent's environment cannot widen the gate: no variable is read by it.
    const held = await tasks(b, ['delete', '1', '2', '3', '4', '--confirm', token], {
      env: { TASKS_POLICY: '{}', TASKS_APPROVED: '1', TASKS_SHADOW: '1', TASKS_PROFILE: 'default' },
    })
    expect(held.code).toBe(9)
    expect(env(held).error).toMatchObject({ code: 'E_HUMAN_REQUIRED', details: { reason: 'approval_required' } })
    expect(storeBytes(b)).toBe(before)
    // An agent's own key is no approver's.
    const self = await tasks(b, ['approve', approval.request, '--key', mallory.path])
    expect(self.code, self.stderr).toBe(0)
    expect((await tasks(b, ['delete', '1', '2', '3', '4', '--confirm', token])).code).toBe(9)
    const signed = await tasks(b, ['approve', approval.request, '--key', alice.path])
    expect(env(signed).data).toMatchObject({ command: 'delete', target_count: 4, filed: true })
    const done = await tasks(b, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(done.code, done.stdout).toBe(0)
    expect((await tasks(b, ['delete', '1', '2', '3', '4', '--confirm', token])).code).toBe(6)
  })

  it('holds any delete under the prod profile, and lets three tasks go elsewhere without approval', async () => {
    const b = box()
    seed(b, five())
    const { approval } = await heldDryRun(b, ['1'], { TASKS_PROFILE: 'prod' })
    expect(approval.rule).toBe('prod-delete')
    const run = await tasks(b, ['delete', '1', '2', '3', '--dry-run'])
    expect(env(run).data.approval).toBeUndefined()
  })

  it('holds an import above 5,000 lines (large-import) and lets 5,000 through without approval', async () => {
    const b = box()
    const file = (n: number) => {
      const path = join(b.root, `in-${n}.jsonl`)
      writeFileSync(path, Array.from({ length: n }, (_, i) => `{"title":"t${i}"}\n`).join(''))
      return path
    }
    const large = file(5001)
    const dry = await tasks(b, ['import', '--file', large, '--dry-run'])
    expect(dry.code, dry.stdout + dry.stderr).toBe(0)
    expect(env(dry).data.approval).toMatchObject({ rule: 'large-import', required: 1 })
    // Held at the confirm, before any job is submitted.
    const held = await tasks(b, ['import', '--file', large, '--confirm', env(dry).data.confirm_token])
    expect(held.code).toBe(9)
    expect(env(held).error).toMatchObject({
      code: 'E_HUMAN_REQUIRED',
      details: { reason: 'approval_required', rule: 'large-import' },
    })
    expect(env(await tasks(b, ['job', 'list'])).data.count).toBe(0)
    const small = await tasks(b, ['import', '--file', file(5000), '--dry-run'])
    expect(small.code).toBe(0)
    expect(env(small).data.approval).toBeUndefined()
  })

  it('refuses a token once the operator policy changed (policy_changed), and a policy that is a link (E_CONFIG)', async () => {
    const b = box()
    seed(b, five())
    operatorPolicy(b, { approvers: [{ id: 'alice', key: alice.pub }] })
    const { token } = await heldDryRun(b, ['1', '2', '3', '4'])
    // Loosened: the agent swaps in its own approver.
    operatorPolicy(b, { approvers: [{ id: 'mallory', key: mallory.pub }] })
    const swapped = await tasks(b, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(swapped.code).toBe(6)
    expect(env(swapped).error.details.reason).toBe('policy_changed')
    const real = join(b.env.XDG_CONFIG_HOME!, 'elsewhere.json')
    writeFileSync(real, '{}', { mode: 0o600 })
    rmSync(join(configDir(b), 'policy.json'))
    symlinkSync(real, join(configDir(b), 'policy.json'))
    const linked = await tasks(b, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(env(linked).error.code).toBe('E_CONFIG')
    operatorPolicy(b, {}, 0o644)
    expect(env(await tasks(b, ['delete', '1', '--dry-run'])).error.code).toBe('E_CONFIG')
    expect(JSON.parse(storeBytes(b)).tasks).toHaveLength(5)
  })

  it('denies by an operator rule before anything is read: E_FORBIDDEN, exit 4, the rule', async () => {
    const b = box()
    seed(b, five())
    operatorPolicy(b, { rules: [{ id: 'no-deletes', when: { action: ['delete'] }, decision: 'deny' }] })
    const run = await tasks(b, ['delete', '1', '--dry-run'])
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({
      code: 'E_FORBIDDEN',
      details: { reason: 'policy_denied', rule: 'no-deletes' },
    })
  })
})
