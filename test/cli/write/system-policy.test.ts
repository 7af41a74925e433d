// The system policy through the real bin, run as an unprivileged user (`nobody`, the agent) with a root-owned
// system policy in a temp dir (pointed at by the test-only preload test/fixtures/system-root.mjs): the agent
// holds its own config dir, its own SSH key, the ledgers and read access to the system policy, and still cannot
// get a held delete applied by editing its policy; an approver the system policy names can; nor can it leave a
// profile the system policy pins by setting or unsetting TASKS_PROFILE. The decisions are tested in-process in
// test/unit/policy/system-policy.test.ts and test/unit/policy/profile-pin.test.ts.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Sandbox } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeRequest } from '../../../src/approvals/request.js'
import { CAN_SWITCH_USER, giveToNobody, NOBODY, tasksAsNobody } from '../../support/as-nobody.js'
import { env, ROOT, seed, storeBytes, useSandbox } from '../../support/helpers.js'
import { sshKeys, sshSign } from '../../support/ssh-keys.js'

const box = useSandbox()
const keys = sshKeys()
const top = mkdtempSync(join(tmpdir(), 'agentcli-system-'))
afterAll(() => {
  keys.dispose()
  rmSync(top, { recursive: true, force: true })
})
const alice = keys.make('alice')
const mallory = keys.make('mallory')
const PRELOAD = pathToFileURL(join(ROOT, 'test/fixtures/system-root.mjs')).href

const configDir = (b: Sandbox) => join(b.env.XDG_CONFIG_HOME!, 'tasks')
const five = () => ['1', '2', '3', '4', '5'].map((id) => ({ id, title: `task ${id}` }))

/** The agent's run: as nobody, with the system policy under `top`. */
const agent = (b: Sandbox, args: string[]) =>
  tasksAsNobody({ ...b, env: { ...b.env, NODE_OPTIONS: `--import=${PRELOAD}`, TEST_SYSTEM_ROOT: top } }, args)

/** File a signature by `key` over the request with `tasks approve --signature`, as the agent (nobody). */
async function file(b: Sandbox, request: string, key: typeof alice) {
  const sig = join(b.root, `${key.path.split('/').pop()}.sig`)
  writeFileSync(sig, sshSign(key, decodeRequest(request)!.bytes))
  giveToNobody(b)
  const run = await agent(b, ['approve', request, '--signature', sig])
  expect(run.code, run.stdout + run.stderr).toBe(0)
}

describe.runIf(CAN_SWITCH_USER)('a root-owned system policy, the tool run as the agent (nobody)', () => {
  it('the agent cannot get a held delete applied by editing its own policy; an approver the system names can', async () => {
    chmodSync(top, 0o755)
    const etc = join(top, 'etc', 'tasks')
    mkdirSync(etc, { recursive: true, mode: 0o755 })
    const system = join(etc, 'policy.json')
    writeFileSync(system, JSON.stringify({ approvers: [{ id: 'alice', key: alice.pub }] }), { mode: 0o644 })
    const b = box()
    seed(b, five())
    // The agent's own file: its own key as an approver, everything allowed, and shadow mode.
    mkdirSync(configDir(b), { recursive: true, mode: 0o700 })
    writeFileSync(
      join(configDir(b), 'policy.json'),
      JSON.stringify({
        mode: 'shadow',
        approvers: [{ id: 'mallory', key: mallory.pub }],
        rules: [{ id: 'anything', when: {}, decision: 'allow' }],
      }),
      { mode: 0o600 },
    )
    giveToNobody(b)
    const before = storeBytes(b)

    const dry = await agent(b, ['delete', '1', '2', '3', '4', '--dry-run'])
    expect(dry.code, dry.stdout + dry.stderr).toBe(0)
    const { confirm_token: token, approval } = env(dry).data as {
      confirm_token: string
      approval: { request: string; rule: string }
    }
    expect(approval.rule).toBe('bulk-delete')
    await file(b, approval.request, mallory)
    const held = await agent(b, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(held.code, held.stdout + held.stderr).toBe(9)
    expect(env(held).error).toMatchObject({ code: 'E_HUMAN_REQUIRED', details: { approvals_valid: 0 } })
    expect(storeBytes(b)).toBe(before)

    // A system policy the agent could have written (its own) is refused, never ignored.
    chownSync(system, NOBODY.uid, NOBODY.gid)
    const unsafe = await agent(b, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(unsafe.code, unsafe.stdout).toBe(4)
    expect(env(unsafe).error).toMatchObject({
      code: 'E_CONFIG',
      details: { path: system, refused: system, reason: 'system_policy_unsafe' },
    })
    expect(storeBytes(b)).toBe(before)
    chownSync(system, 0, 0)

    await file(b, approval.request, alice)
    const done = await agent(b, ['delete', '1', '2', '3', '4', '--confirm', token])
    expect(done.code, done.stdout + done.stderr).toBe(0)
    expect(storeBytes(b)).not.toBe(before)
  })

  it('pins the profile: a delete under prod is held with TASKS_PROFILE unset, and TASKS_PROFILE=dev is refused', async () => {
    chmodSync(top, 0o755)
    const etc = join(top, 'etc', 'tasks')
    mkdirSync(etc, { recursive: true, mode: 0o755 })
    writeFileSync(
      join(etc, 'policy.json'),
      JSON.stringify({
        profile: 'prod',
        rules: [{ id: 'prod-deletes', when: { action: ['delete'], profile: ['prod'] }, decision: 'approve' }],
      }),
      { mode: 0o644 },
    )
    const b = box()
    seed(b, five())
    giveToNobody(b)
    const before = storeBytes(b)
    const dev = { ...b, env: { ...b.env, TASKS_PROFILE: 'dev' } }

    // Unset: the agent runs as prod, so the delete of one task is held (named by the example's own prod-delete,
    // the first of the rules that ask for approval; the system policy's holds it too).
    const dry = await agent(b, ['delete', '1', '--dry-run'])
    expect(dry.code, dry.stdout + dry.stderr).toBe(0)
    const { confirm_token: token, approval } = env(dry).data as { confirm_token: string; approval: { rule: string } }
    expect(approval.rule).toBe('prod-delete')
    const held = await agent(b, ['delete', '1', '--confirm', token])
    expect(held.code, held.stdout + held.stderr).toBe(9)
    expect(env(held).error).toMatchObject({ code: 'E_HUMAN_REQUIRED' })
    expect(storeBytes(b)).toBe(before)

    // Another profile is refused before anything is read or written, at the dry-run and at the confirm.
    for (const args of [
      ['delete', '1', '--dry-run'],
      ['delete', '1', '--confirm', token],
    ]) {
      const refused = await agent(dev, args)
      expect(refused.code, refused.stdout + refused.stderr).toBe(4)
      expect(env(refused).error).toMatchObject({
        code: 'E_CONFIG',
        details: { reason: 'profile_pinned', pinned: 'prod', got: 'dev', setting: 'TASKS_PROFILE' },
      })
    }
    expect(storeBytes(b)).toBe(before)
  })
})
