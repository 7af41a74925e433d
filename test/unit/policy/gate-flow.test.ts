// The policy gate inside the write flow, in-process over fake steps and real ssh-keygen keys: a held change is
// applied only with enough valid approvals for exactly it; deny, a missing or foreign approval, a changed policy,
// an expired or replayed token, a self-approval and racing confirms are all refused with nothing applied.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { approvalRequest } from '../../../src/approvals/request.js'
import type { AuditFacts } from '../../../src/audit/record.js'
import type { Target } from '../../../src/confirm/targets.js'
import type { Binding } from '../../../src/confirm/token.js'
import { loadPolicy, POLICY_FILE, SYSTEM_ROOT_FOR_TESTS } from '../../../src/policy/load.js'
import { type EffectivePolicy, effectivePolicy, type PolicyDocument } from '../../../src/policy/policy.js'
import type { WriteCall, WriteSteps } from '../../../src/write/call.js'
import { confirmWrite } from '../../../src/write/confirm-flow.js'
import { previewWrite } from '../../../src/write/dry-run.js'
import { writeFlow } from '../../../src/write/flow.js'
import type { GateCall } from '../../../src/write/gate.js'
import type { Plan } from '../../../src/write/plan.js'
import { UNDECLARED_RISK } from '../../../src/write/risk.js'
import { sshKeys, sshSign } from '../../support/ssh-keys.js'
import { fakeSteps, memoryApprovals, memoryLedger, refusalOf } from '../../support/write-fakes.js'

const keys = sshKeys()
afterAll(() => keys.dispose())
const alice = keys.make('alice')
const bob = keys.make('bob')
const KEY = Buffer.alloc(32, 3)
const NOW = 1_800_000_000_000
const targets: Target[] = ['1', '2', '3', '4'].map((id) => ({ id, version: 1 }))
const doc: PolicyDocument = {
  approvers: [
    { id: 'alice', key: alice.pub },
    { id: 'bob', key: bob.pub, account: 'agent' },
  ],
  rules: [
    { id: 'bulk', when: { targets_over: 3 }, decision: 'approve' },
    { id: 'big', when: { size_over: 100 }, decision: 'deny' },
    { id: 'prod', when: { profile: ['prod'] }, decision: 'deny' },
  ],
}

type World = {
  steps: WriteSteps<unknown>
  call: WriteCall
  facts: AuditFacts[]
  applied: number
  planned: number
  filed: Map<string, string[]>
  used: Set<string>
}

function world(
  over: { doc?: PolicyDocument; policy?: EffectivePolicy; profile?: string; plan?: Partial<Plan<unknown>> } = {},
): World {
  const policy = over.policy ?? effectivePolicy(over.doc ?? doc, undefined)!
  const principal = { account: 'agent', os_user: 'ci', profile: over.profile ?? 'default' }
  const binding: Binding = { tool: 't\0t', command: 'delete', args: { ids: ['1', '2', '3', '4'] }, principal }
  binding.policy = policy.digest
  const filed = new Map<string, string[]>()
  const used = new Set<string>()
  const store = memoryApprovals(filed)
  const ledger = memoryLedger(used)
  const gate: GateCall = {
    policy,
    facts: {
      command: 'delete',
      kind: 'write',
      risk: UNDECLARED_RISK,
      targets: 4,
      profile: principal.profile,
      account: 'agent',
    },
    bin: 'tasks',
    approvals: async () => store,
    requester: { account: 'agent', os_user: 'ci' },
    resume: 'tasks delete 1 2 3 4 --confirm <token>',
  }
  const w: World = {
    facts: [],
    applied: 0,
    planned: 0,
    filed,
    used,
    call: { binding, audit: (f) => void w.facts.push(f), idem: undefined, gate },
    steps: fakeSteps('delete', KEY, ledger, {
      plan: async () => {
        w.planned++
        return { changes: [], targets, ...over.plan }
      },
      apply: async () => {
        w.applied++
        return { deleted: 4 }
      },
    }),
  }
  return w
}

type DryRun = { confirm_token: string; approval?: { request: string; request_id: string; required: number } }

async function dryRun(w: World): Promise<DryRun> {
  return (await previewWrite(w.steps, await w.steps.plan(), w.call, 60)) as DryRun
}

/** File a signature by `key` over the request the dry-run named. */
function approve(w: World, d: DryRun, key = alice, bytes?: Buffer) {
  const { decodeRequest } = require_()
  const r = decodeRequest(d.approval!.request)!
  w.filed.set(r.id, [...(w.filed.get(r.id) ?? []), sshSign(key, bytes ?? r.bytes)])
}
let require_: () => typeof import('../../../src/approvals/request.js')

const failure = refusalOf

beforeEach(async () => {
  const mod = await import('../../../src/approvals/request.js')
  require_ = () => mod
  vi.spyOn(Date, 'now').mockReturnValue(NOW)
})
afterEach(() => vi.restoreAllMocks())

describe('the policy gate in the write flow', () => {
  it('denies before the command plans anything (E_FORBIDDEN, policy_denied, the rule)', async () => {
    const w = world({ profile: 'prod' })
    const e = await failure(
      writeFlow(w.steps, { dryRun: true, token: undefined, key: undefined, bound: {} }, w.call, {
        bin: 'tasks',
        argv: [],
        ttlSeconds: 60,
      }),
    )
    expect(e).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'policy_denied', rule: 'prod' } })
    expect(w.planned).toBe(0)
    expect(w.facts).toContainEqual({ mode: 'refused' })
  })

  it('denies on the plan (its size) at the dry-run, minting nothing', async () => {
    const w = world({ plan: { size: 101 } })
    const e = await failure(dryRun(w))
    expect(e).toMatchObject({ code: 'E_FORBIDDEN', details: { rule: 'big' } })
    expect(w.facts.some((f) => f.token_id)).toBe(false)
  })

  it('records but never enforces in shadow mode', async () => {
    const w = world({ doc: { ...doc, mode: 'shadow' }, profile: 'prod' })
    const d = await dryRun(w)
    expect(d.approval).toBeUndefined()
    expect(await confirmWrite(w.steps, d.confirm_token, w.call)).toEqual({ deleted: 4 })
    expect(w.facts).toContainEqual({ policy: expect.objectContaining({ decision: 'deny', shadow: true }) })
  })

  it('lets an allowed change through with no approval', async () => {
    const w = world({ doc: { rules: [] } })
    const d = await dryRun(w)
    expect(d.approval).toBeUndefined()
    expect(await confirmWrite(w.steps, d.confirm_token, w.call)).toEqual({ deleted: 4 })
  })

  it('refuses a held change with implicit or wildcard targets', async () => {
    for (const t of [[], [{ id: '*', version: null }]]) {
      const w = world({ plan: { targets: t } })
      w.call.gate!.facts.targets = 9
      expect(await failure(dryRun(w))).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'implicit_targets' } })
    }
  })

  it('holds a change without approval: E_HUMAN_REQUIRED with what to relay, nothing applied or consumed', async () => {
    const w = world()
    const d = await dryRun(w)
    expect(d.approval).toMatchObject({ required: 1, request_id: expect.stringMatching(/^ar_/) })
    const e = await failure(confirmWrite(w.steps, d.confirm_token, w.call))
    expect(e.code).toBe('E_HUMAN_REQUIRED')
    expect(e.details).toMatchObject({
      reason: 'approval_required',
      request_id: d.approval!.request_id,
      resume: 'tasks delete 1 2 3 4 --confirm <token>',
      summary: { target_count: 4, targets: ['1', '2', '3', '4'] },
    })
    expect(String(e.details.approve_command)).toContain('tasks approve ar1.')
    expect([w.applied, w.used.size]).toEqual([0, 0])
  })

  it('applies once with a valid approval, records the approver, and refuses a replay', async () => {
    const w = world()
    const d = await dryRun(w)
    approve(w, d)
    expect(await confirmWrite(w.steps, d.confirm_token, w.call)).toEqual({ deleted: 4 })
    expect(w.facts).toContainEqual({ approved_by: ['alice'], approval_request: d.approval!.request_id })
    const again = await failure(confirmWrite(w.steps, d.confirm_token, w.call))
    expect(again.details.reason).toBe('already_used')
    expect(w.applied).toBe(1)
  })

  it('counts an elicitation approval only when the system policy turns the channel on, verified by the confirm keys', async () => {
    const { mintElicitation } = await import('../../../src/approvals/elicitation.js')
    const ring = { current: { id: null, key: KEY }, keys: new Map([[null, KEY]]) }
    const elicit = (w: World, d: DryRun) => {
      const r = require_().decodeRequest(d.approval!.request)!
      w.filed.set(r.id, [...(w.filed.get(r.id) ?? []), mintElicitation(ring, r, 'client:host', NOW)])
    }
    // Off: the tool's and the user's documents cannot turn it on.
    const user = { ...doc, approval: { channels: ['ssh', 'mcp-elicitation'] } } satisfies PolicyDocument
    const off = world({ policy: effectivePolicy(user, user)! })
    const d0 = await dryRun(off)
    elicit(off, d0)
    const e = await failure(confirmWrite(off.steps, d0.confirm_token, off.call))
    expect(e).toMatchObject({ code: 'E_HUMAN_REQUIRED', details: { not_counted: [{ reason: 'channel_disabled' }] } })
    expect(off.applied).toBe(0)
    // On in the system policy: counted, with the gate's key ring, and recorded as the approver.
    const on = world({ policy: effectivePolicy(undefined, undefined, { ...doc, approval: user.approval })! })
    on.call.gate!.keyRing = on.steps.keyRing
    const d1 = await dryRun(on)
    elicit(on, d1)
    expect(await confirmWrite(on.steps, d1.confirm_token, on.call)).toEqual({ deleted: 4 })
    expect(on.facts).toContainEqual({
      approved_by: ['mcp-elicitation:client:host'],
      approval_request: d1.approval!.request_id,
    })
    // On, but a gate without the key ring verifies nothing (fails closed).
    const keyless = world({ policy: effectivePolicy(undefined, undefined, { ...doc, approval: user.approval })! })
    const d2 = await dryRun(keyless)
    elicit(keyless, d2)
    const k = await failure(confirmWrite(keyless.steps, d2.confirm_token, keyless.call))
    expect(k.details).toMatchObject({ not_counted: [{ reason: 'unknown_key' }] })
  })

  it('applies exactly once when approved confirms race', async () => {
    const w = world()
    const d = await dryRun(w)
    approve(w, d)
    const results = await Promise.allSettled([1, 2, 3].map(() => confirmWrite(w.steps, d.confirm_token, w.call)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(w.applied).toBe(1)
  })

  it('does not count a self-approval, a forged one, or one over other bytes', async () => {
    const w = world()
    const d = await dryRun(w)
    approve(w, d, bob) // bob acts as the requester's account
    approve(w, d, alice, Buffer.from('another change'))
    const e = await failure(confirmWrite(w.steps, d.confirm_token, w.call))
    expect(e.details).toMatchObject({
      reason: 'approval_required',
      not_counted: [
        { index: 0, reason: 'self_approval' },
        { index: 1, reason: 'bad_signature' },
      ],
    })
    expect(w.applied).toBe(0)
  })

  it('says how many are still missing under N-of-M', async () => {
    const w = world({ doc: { ...doc, rules: [{ id: 'two', when: {}, decision: 'approve', approvals: 2 }] } })
    const d = await dryRun(w)
    approve(w, d)
    const e = await failure(confirmWrite(w.steps, d.confirm_token, w.call))
    expect(e.details).toMatchObject({ reason: 'approvals_short', approvals_required: 2, approvals_valid: 1 })
  })

  it('refuses a token judged under another policy (policy_changed), even with an approval', async () => {
    const w = world()
    const d = await dryRun(w)
    approve(w, d)
    const looser = world({ doc: { ...doc, rules: [] } })
    looser.filed.set(d.approval!.request_id, w.filed.get(d.approval!.request_id)!)
    const e = await failure(confirmWrite(looser.steps, d.confirm_token, looser.call))
    expect(e).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'policy_changed' } })
    expect(looser.applied).toBe(0)
  })

  it.runIf(process.getuid?.() === 0)(
    'refuses a token whose system policy changed before the confirm (policy_changed), even with an approval',
    async () => {
      const top = mkdtempSync(join(tmpdir(), 'agentcli-sys-'))
      chmodSync(top, 0o755)
      mkdirSync(join(top, 'etc', 'tasks'), { recursive: true, mode: 0o755 })
      const file = join(top, 'etc', 'tasks', POLICY_FILE)
      const conf = join(top, 'conf')
      mkdirSync(conf, { mode: 0o700 })
      const hook = globalThis as Record<symbol, unknown>
      hook[SYSTEM_ROOT_FOR_TESTS] = top
      try {
        writeFileSync(file, JSON.stringify(doc), { mode: 0o644 })
        const w = world({ policy: loadPolicy(conf, {}, 'tasks')! })
        const d = await dryRun(w)
        approve(w, d)
        // Root loosens the system policy between the dry-run and the confirm: the token was judged under the old one.
        writeFileSync(file, JSON.stringify({ ...doc, rules: [] }))
        const looser = world({ policy: loadPolicy(conf, {}, 'tasks')! })
        looser.filed.set(d.approval!.request_id, w.filed.get(d.approval!.request_id)!)
        const e = await failure(confirmWrite(looser.steps, d.confirm_token, looser.call))
        expect(e).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'policy_changed' } })
        expect(looser.applied).toBe(0)
      } finally {
        delete hook[SYSTEM_ROOT_FOR_TESTS]
        rmSync(top, { recursive: true, force: true })
      }
    },
  )

  it('refuses an approved token once it expired', async () => {
    const w = world()
    const d = await dryRun(w)
    approve(w, d)
    vi.spyOn(Date, 'now').mockReturnValue(NOW + 61_000)
    expect((await failure(confirmWrite(w.steps, d.confirm_token, w.call))).details.reason).toBe('expired')
    expect(w.applied).toBe(0)
  })

  it('does not count an approval of the same call under another token', async () => {
    const w = world()
    const first = await dryRun(w)
    approve(w, first)
    const second = await dryRun(w)
    // The first request's signature filed under the second request's id: it signs other bytes.
    const sig = w.filed.get(first.approval!.request_id)!
    w.filed.set(second.approval!.request_id, sig)
    const e = await failure(confirmWrite(w.steps, second.confirm_token, w.call))
    expect(e.details).toMatchObject({ not_counted: [{ index: 0, reason: 'bad_signature' }] })
    expect(approvalRequest(w.call.binding, targets, 'x', NOW).id).not.toBe(first.approval!.request_id)
  })
})
