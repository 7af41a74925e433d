// The worker of an async write judges the change again before it applies anything, over fake steps and real
// ssh-keygen keys (issue 24): the job record is the agent's to write, so a forged record for a change the policy
// holds, an approval of another change, too few approvers, an approval past its request's expiry, a deny on the
// worker's own principal and a record missing what the approval binds are all refused with nothing applied; a
// change approved at its confirm is applied by its worker. The whole check order of the worker is here too.
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { decodeRequest } from '../../../src/approvals/request.js'
import type { Target } from '../../../src/confirm/targets.js'
import type { Binding } from '../../../src/confirm/token.js'
import { AgentError } from '../../../src/errors/agent-error.js'
import type { JobPlan, JobRecord } from '../../../src/jobs/types.js'
import { type EffectivePolicy, effectivePolicy, type PolicyDocument } from '../../../src/policy/policy.js'
import type { WriteCall, WriteSteps } from '../../../src/write/call.js'
import { confirmWrite } from '../../../src/write/confirm-flow.js'
import { previewWrite } from '../../../src/write/dry-run.js'
import type { GateCall } from '../../../src/write/gate.js'
import { confirmedPlan, type JobGate } from '../../../src/write/job-check.js'
import type { Plan } from '../../../src/write/plan.js'
import { UNDECLARED_RISK } from '../../../src/write/risk.js'
import { type SshKey, sshKeys, sshSign } from '../../support/ssh-keys.js'
import { fakeSteps, memoryApprovals, memoryLedger, refusalOf } from '../../support/write-fakes.js'

const keys = sshKeys()
afterAll(() => keys.dispose())
const alice = keys.make('alice')
const bob = keys.make('bob')
const KEY = Buffer.alloc(32, 5)
const NOW = 1_800_000_000_000
const TTL_S = 60
const targets: Target[] = [{ id: 'file:/in.jsonl', version: 'sha-1' }]
const doc: PolicyDocument = {
  approvers: [
    { id: 'alice', key: alice.pub },
    { id: 'bob', key: bob.pub, account: 'svc' },
  ],
  rules: [
    { id: 'large-import', when: { size_over: 5000 }, decision: 'approve' },
    { id: 'watched', when: { account: ['watched'] }, decision: 'approve' },
    { id: 'prod', when: { profile: ['prod'] }, decision: 'deny' },
  ],
}
type Principal = { account: string; os_user: string; profile: string }
const AGENT: Principal = { account: 'agent', os_user: 'ci', profile: 'default' }

type World = {
  policy: EffectivePolicy
  steps: WriteSteps<unknown>
  call: WriteCall
  filed: Map<string, string[]>
  /** Plans the worker computed, and changes it applied (the job's work). */
  planned: number
  applied: number
}

function gateFor(policy: EffectivePolicy, filed: Map<string, string[]>, p: Principal): GateCall {
  return {
    policy,
    facts: {
      command: 'import',
      kind: 'write',
      risk: UNDECLARED_RISK,
      targets: 0,
      profile: p.profile,
      account: p.account,
    },
    bin: 'tasks',
    approvals: async () => memoryApprovals(filed),
    requester: { account: p.account, os_user: p.os_user },
    resume: 'tasks import --file /in.jsonl --confirm <token>',
  }
}

function world(over: { doc?: PolicyDocument; size?: number; principal?: Principal } = {}): World {
  const policy = effectivePolicy(over.doc ?? doc, undefined)!
  const principal = over.principal ?? AGENT
  const binding: Binding = {
    tool: 'tasks\0tasks-example',
    command: 'import',
    args: { file: '/in.jsonl' },
    principal,
    policy: policy.digest,
  }
  const filed = new Map<string, string[]>()
  const w: World = {
    policy,
    filed,
    planned: 0,
    applied: 0,
    call: { binding, audit: () => {}, idem: undefined, gate: gateFor(policy, filed, principal) },
    steps: fakeSteps('import', KEY, memoryLedger(new Set()), {
      plan: async () => ({ changes: [], targets, size: over.size ?? 6000 }),
      // An async write's apply() submits the job: the record carries what the confirm verified.
      apply: async () => ({ submitted: w.steps.state.confirmed }),
    }),
  }
  return w
}

type DryRun = { confirm_token: string; approval?: { request: string; request_id: string } }

async function dryRun(w: World): Promise<DryRun> {
  return (await previewWrite(w.steps, await w.steps.plan(), w.call, TTL_S)) as DryRun
}

/** File a signature by `key` over the request a dry-run named, under the id `as` (that request's own by default). */
function approve(w: World, d: DryRun, key: SshKey = alice, as?: string) {
  const r = decodeRequest(d.approval!.request)!
  const id = as ?? r.id
  w.filed.set(id, [...(w.filed.get(id) ?? []), sshSign(key, r.bytes)])
}

/** Dry-run, approve (unless `signers` is empty), confirm: the job record the confirm submitted. */
async function confirmedJob(w: World, signers: SshKey[] = [alice]): Promise<JobRecord> {
  const d = await dryRun(w)
  for (const k of signers) approve(w, d, k)
  const { submitted } = (await confirmWrite(w.steps, d.confirm_token, w.call)) as { submitted: JobPlan }
  return record(submitted)
}

function record(plan?: JobPlan): JobRecord {
  return { job_id: 'job_1', command: 'import', argv: ['--file', '/in.jsonl'], ...(plan ? { plan } : {}) } as JobRecord
}

/** The worker: the plan recomputed, checked and judged as `WriteCommand.runWork` does, then the work applied. */
async function work(w: World, job: JobRecord, as: Principal = AGENT, plan?: () => Promise<Plan<unknown>>) {
  const gate = async (): Promise<JobGate> => ({
    gate: gateFor(w.policy, w.filed, as),
    binding: { tool: 'tasks\0tasks-example', command: 'import', args: { file: '/in.jsonl' }, policy: w.policy.digest },
  })
  const recompute = async () => {
    w.planned++
    return plan ? plan() : w.steps.plan()
  }
  const planned = await confirmedPlan(job, recompute, { bin: 'tasks', id: 'import', policy: w.policy.digest }, gate)
  w.applied++
  return planned
}

const refusal = refusalOf

beforeEach(() => void vi.spyOn(Date, 'now').mockReturnValue(NOW))
afterEach(() => vi.restoreAllMocks())

describe('the worker of an async write judges the change again', () => {
  it('applies a held change approved at its confirm, once; the record carries the principal and the expiry', async () => {
    const w = world()
    const job = await confirmedJob(w)
    expect(job.plan).toMatchObject({
      token_id: expect.any(String),
      targets,
      policy: w.policy.digest,
      expires_at: new Date(NOW + TTL_S * 1000).toISOString(),
      principal: AGENT,
    })
    expect(await work(w, job)).toMatchObject({ targets, size: 6000 })
    expect(w.applied).toBe(1)
  })

  it('refuses a forged record for a held change: no approval, E_FORBIDDEN, nothing applied', async () => {
    const w = world()
    const forged: JobPlan = {
      token_id: 'ct_forged',
      targets,
      policy: w.policy.digest,
      expires_at: new Date(NOW + 60_000).toISOString(),
      principal: AGENT,
    }
    const e = await refusal(work(w, record(forged)))
    expect(e).toBeInstanceOf(AgentError)
    expect(e).toMatchObject({
      code: 'E_FORBIDDEN',
      details: {
        reason: 'approval_required',
        rule: 'large-import',
        token_id: 'ct_forged',
        approvals_required: 1,
        approvals_valid: 0,
        request_id: expect.stringMatching(/^ar_/),
        fix: 'run tasks import with --dry-run, have a person approve the request it names, then --confirm',
      },
    })
    expect(e.details.not_counted).toBeUndefined()
    expect(w.applied).toBe(0)
  })

  it('refuses the record of a confirm that was held (no approval): the forger copies a real token id', async () => {
    const w = world()
    const d = await dryRun(w)
    await expect(confirmWrite(w.steps, d.confirm_token, w.call)).rejects.toMatchObject({ code: 'E_HUMAN_REQUIRED' })
    const { verifyToken } = await import('../../../src/confirm/token.js')
    const claims = verifyToken(KEY, d.confirm_token, w.call.binding, NOW).claims!
    const forged = {
      token_id: claims.id,
      targets,
      policy: w.policy.digest,
      expires_at: new Date(claims.expiresAt).toISOString(),
      principal: AGENT,
    }
    const e = await refusal(work(w, record(forged)))
    expect(e.details).toMatchObject({ reason: 'approval_required', request_id: d.approval!.request_id })
    expect(w.applied).toBe(0)
  })

  it('does not count an approval of another change filed under this request', async () => {
    const w = world()
    const d = await dryRun(w)
    approve(w, d)
    const { submitted } = (await confirmWrite(w.steps, d.confirm_token, w.call)) as { submitted: JobPlan }
    // A record for another change (another token), with the approved request's signature filed under its request.
    const forged = record({ ...submitted, token_id: 'ct_other' })
    const first = await refusal(work(w, forged))
    expect(first.details.reason).toBe('approval_required')
    approve(w, d, alice, first.details.request_id as string)
    const e = await refusal(work(w, forged))
    expect(e.details).toMatchObject({
      reason: 'approval_required',
      not_counted: [{ index: 0, reason: 'bad_signature' }],
    })
    expect(w.applied).toBe(0)
  })

  it('refuses a record naming another principal than the approved one', async () => {
    const w = world()
    const job = await confirmedJob(w)
    const e = await refusal(work(w, { ...job, plan: { ...job.plan!, principal: { ...AGENT, account: null } } }))
    expect(e).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'approval_required' } })
    expect(w.applied).toBe(0)
  })

  it('needs every approver N-of-M asks for: one of two is approvals_short', async () => {
    const two = {
      ...doc,
      rules: [{ id: 'two', when: { size_over: 5000 }, decision: 'approve' as const, approvals: 2 }],
    }
    const w = world({ doc: two })
    const job = await confirmedJob(w, [alice, bob])
    // Bob's signature is gone by the time the worker runs (an edited store): one valid of two.
    for (const [id, sigs] of w.filed) w.filed.set(id, sigs.slice(0, 1))
    const e = await refusal(work(w, job))
    expect(e).toMatchObject({
      code: 'E_FORBIDDEN',
      details: { reason: 'approvals_short', rule: 'two', approvals_required: 2, approvals_valid: 1 },
    })
    expect(w.applied).toBe(0)
  })

  it('refuses an approved job that starts after its request expired: a replay is bounded by that expiry', async () => {
    const w = world()
    const job = await confirmedJob(w)
    // The same record run again (a forged copy) within the expiry passes the approval check: bounded by it.
    expect(await work(w, job)).toBeDefined()
    vi.spyOn(Date, 'now').mockReturnValue(NOW + TTL_S * 1000)
    const e = await refusal(work(w, job))
    expect(e).toMatchObject({
      code: 'E_FORBIDDEN',
      details: { reason: 'approval_expired', rule: 'large-import', expired_at: job.plan!.expires_at },
    })
    expect(w.applied).toBe(1)
  })

  it("does not count an approver who is the worker's own principal", async () => {
    const w = world()
    const job = await confirmedJob(w, [bob])
    expect(await work(w, job)).toBeDefined()
    // Bob acts as `svc`: a worker running as `svc` is the requester too.
    const e = await refusal(work(w, job, { account: 'svc', os_user: 'svc', profile: 'default' }))
    expect(e.details).toMatchObject({
      reason: 'approval_required',
      not_counted: [{ index: 0, reason: 'self_approval' }],
    })
  })

  it("denies on the worker's own principal (E_FORBIDDEN policy_denied), and holds on the confirm's", async () => {
    const w = world({ size: 10 })
    const job = await confirmedJob(w, [])
    const e = await refusal(work(w, job, { ...AGENT, profile: 'prod' }))
    expect(e).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'policy_denied', rule: 'prod' } })
    // A small import by `agent` is allowed; the record says the confirm's principal was `watched`, whose changes the
    // policy holds: the strictest verdict holds, and the request names that principal.
    const watched = await refusal(
      work(w, { ...job, plan: { ...job.plan!, principal: { ...AGENT, account: 'watched' } } }),
    )
    expect(watched.details).toMatchObject({ reason: 'approval_required', rule: 'watched' })
    expect(w.applied).toBe(0)
    expect(await work(w, job)).toBeDefined()
  })

  it('refuses a held change whose record lacks the principal or the expiry (unverified_job)', async () => {
    const w = world()
    const job = await confirmedJob(w)
    const { expires_at, principal, ...bare } = job.plan!
    for (const plan of [
      { ...bare, expires_at: expires_at! },
      { ...bare, principal: principal! },
    ]) {
      const e = await refusal(work(w, record(plan)))
      expect(e).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'unverified_job' } })
      expect(e.message).toContain('not what its approval binds')
    }
    // A change the policy does not hold needs neither.
    const small = world({ size: 10 })
    expect(await work(small, record({ token_id: 't', targets, policy: small.policy.digest }))).toBeDefined()
    expect(w.applied).toBe(0)
  })

  it('lets a shadow policy record and not block', async () => {
    const w = world({ doc: { ...doc, mode: 'shadow' } })
    expect(await work(w, record({ token_id: 't', targets, policy: w.policy.digest }))).toBeDefined()
  })
})

describe('the worker check order', () => {
  it('refuses a record with no plan (unverified_job) before planning', async () => {
    const w = world()
    for (const job of [record(), record({ token_id: 't' } as JobPlan)]) {
      const e = await refusal(work(w, job))
      expect(e).toMatchObject({
        code: 'E_CONFLICT',
        details: { reason: 'unverified_job', fix: 'run tasks import with --dry-run, then --confirm' },
      })
    }
    expect(w.planned).toBe(0)
  })

  it('refuses targets that moved (state_drift), or are gone, before judging', async () => {
    const w = world()
    const job = await confirmedJob(w)
    const moved = await refusal(work(w, job, AGENT, async () => ({ changes: [], targets: [] })))
    expect(moved).toMatchObject({ code: 'E_CONFLICT' })
    const unplanned = await refusal(work(w, job, AGENT, async () => ({ changes: [] })))
    expect(unplanned.code).toBe('E_CONFLICT')
    const gone = await refusal(
      work(w, job, AGENT, async () => {
        throw new AgentError('E_NOT_FOUND', 'no file')
      }),
    )
    expect(gone).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'state_drift' } })
    const other = await refusal(
      work(w, job, AGENT, async () => {
        throw new Error('disk on fire')
      }),
    )
    expect(other.message).toBe('disk on fire')
    expect(w.applied).toBe(0)
  })

  it('applies without a gate when the tool has no policy', async () => {
    const w = world()
    const planned = await confirmedPlan(record({ token_id: 't', targets }), w.steps.plan, {
      bin: 'tasks',
      id: 'import',
    })
    expect(planned.targets).toEqual(targets)
  })
})
