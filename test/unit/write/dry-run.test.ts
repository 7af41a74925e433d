// Where a confirm token is minted (src/write/dry-run.ts), in-process over traced fake steps: what the token binds
// (the call's tool, command, arguments and principal, the plan's targets and versions, its key and expiry), what the
// preview shows, a held change's approval request, and the one builder of every `dry_run_command`. A token
// presented for another call, another plan or after its expiry must not verify; a step's fault mints nothing.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { decodeRequest } from '../../../src/approvals/request.js'
import type { Target } from '../../../src/confirm/targets.js'
import { type Binding, tokenKeyId, verifyTargets, verifyToken } from '../../../src/confirm/token.js'
import { AgentError } from '../../../src/errors/agent-error.js'
import type { PolicyDocument } from '../../../src/policy/policy.js'
import { invocation } from '../../../src/runtime/invocation.js'
import { newWriteState } from '../../../src/write/call.js'
import { confirmationRequired, dryRunCommand, previewWrite } from '../../../src/write/dry-run.js'
import { impactOf } from '../../../src/write/impact.js'
import type { Plan } from '../../../src/write/plan.js'
import { DELETE_BINDING, fakeGate, refusalOf, type TracedWrite, tracedWrite } from '../../support/write-fakes.js'

const KEY = Buffer.alloc(32, 6)
const NOW = 1_800_000_000_000
const binding: Binding = DELETE_BINDING
const targets: Target[] = [
  { id: '1', version: 'v1' },
  { id: '2', version: 7 },
]
const change = (id: string) => ({ action: 'delete', resource: 'task', id, before: { id }, after: null })
const plan: Plan<unknown> = { changes: [change('1'), change('2')], targets }

type Preview = {
  preview: Record<string, unknown>
  confirm_token: string
  expires_at: string
  approval?: { request_id: string; rule: string; required: number; request: string; approve_command: string }
}

const preview = async (w: TracedWrite, p: Plan<unknown> = plan, ttl = 60) =>
  (await previewWrite(w.steps, p, w.call, ttl)) as Preview

beforeEach(() => {
  vi.spyOn(Date, 'now').mockReturnValue(NOW)
})
afterEach(() => {
  vi.restoreAllMocks()
})

describe('previewWrite: the token binds this call, its principal and tool, and the plan', () => {
  it('verifies for exactly this call and these targets, under the ring’s current key, until its expiry', async () => {
    const w = tracedWrite(binding, KEY)
    const out = await preview(w, plan, 90)
    const verdict = verifyToken(KEY, out.confirm_token, binding, NOW)
    expect(verdict.ok).toBe(true)
    const claims = verdict.claims!
    expect(tokenKeyId(out.confirm_token)).toBe('k2')
    expect(claims.expiresAt).toBe(NOW + 90_000)
    expect(out.expires_at).toBe(new Date(NOW + 90_000).toISOString())
    expect(verifyTargets(KEY, claims, targets)).toMatchObject({ ok: true })
    // Its id is what the audit record learns, once; the key ring is read once and nothing else is.
    expect(w.facts).toEqual([{ token_id: claims.id }])
    expect(w.trace).toEqual(['keyRing'])
    expect(w.used.size).toBe(0)
  })

  it.each([
    ['other_tool', { tool: 'fixture\0fixture' }],
    ['other_command', { command: 'task:create' }],
    ['other_account', { principal: { account: 'eve', profile: 'default' } }],
    ['other_account', { principal: { account: 'ann', profile: 'prod' } }],
    ['args_changed', { args: { ids: ['1', '3'] } }],
    ['policy_changed', { policy: 'a-policy-that-appeared' }],
  ] as const)('does not verify for another call (%s)', async (reason, over) => {
    const { confirm_token } = await preview(tracedWrite(binding, KEY))
    expect(verifyToken(KEY, confirm_token, { ...binding, ...over }, NOW)).toMatchObject({ ok: false, reason })
  })

  it('does not verify under another key, once expired, or for another plan’s targets', async () => {
    const { confirm_token } = await preview(tracedWrite(binding, KEY), plan, 60)
    expect(verifyToken(Buffer.alloc(32, 9), confirm_token, binding, NOW)).toMatchObject({ reason: 'tampered' })
    expect(verifyToken(KEY, confirm_token, binding, NOW + 60_000)).toMatchObject({ reason: 'expired' })
    const { claims } = verifyToken(KEY, confirm_token, binding, NOW)
    const moved = [targets[0]!, { id: '2', version: 8 }]
    expect(verifyTargets(KEY, claims!, moved)).toMatchObject({ ok: false, reason: 'state_drift' })
    expect(verifyTargets(KEY, claims!, [...targets, { id: '3', version: 1 }])).toMatchObject({
      ok: false,
      reason: 'target_changed',
    })
    expect(verifyTargets(KEY, claims!, [targets[0]!])).toMatchObject({ ok: false })
  })

  it('binds a plan without targets to none: a target that appears later is another plan', async () => {
    const { confirm_token } = await preview(tracedWrite(binding, KEY), { changes: [change('new')] })
    const { claims } = verifyToken(KEY, confirm_token, binding, NOW)
    expect(verifyTargets(KEY, claims!, [])).toMatchObject({ ok: true })
    expect(verifyTargets(KEY, claims!, [{ id: 'new', version: 1 }])).toMatchObject({ reason: 'target_changed' })
  })

  it('two dry-runs of one call mint two tokens of their own (each single use)', async () => {
    const w = tracedWrite(binding, KEY)
    const a = await preview(w)
    const b = await preview(w)
    expect(a.confirm_token).not.toBe(b.confirm_token)
    expect(w.facts[0]!.token_id).not.toBe(w.facts[1]!.token_id)
  })

  it('a key ring that cannot be read fails closed: its error, no token, nothing audited', async () => {
    const w = tracedWrite(binding, KEY)
    const unreadable = new AgentError('E_CONFIG', 'confirm.secret is readable by others')
    w.steps.keyRing = () => Promise.reject(unreadable)
    expect(await refusalOf(preview(w))).toBe(unreadable)
    expect(w.facts).toEqual([])
  })
})

describe('previewWrite: the preview', () => {
  it('shows the changes, rejected items by code and message only, the items already applied, the impact', async () => {
    const w = tracedWrite(binding, KEY)
    w.steps.state = { ...newWriteState(), landed: new Map([['0', { id: '0', action: 'delete' }]]) }
    const secret = new AgentError('E_NOT_FOUND', 'no task 9', { details: { internal: 'row 9 of shard 3' } })
    const out = await preview(w, { ...plan, rejected: [{ id: '9', error: secret }] })
    expect(out.preview).toEqual({
      changes: plan.changes,
      rejected: [{ id: '9', error: { code: 'E_NOT_FOUND', message: 'no task 9' } }],
      already_applied: [{ id: '0', action: 'delete' }],
      impact: impactOf(w.steps.risk, plan),
    })
    expect(Object.keys(out)).toEqual(['preview', 'confirm_token', 'expires_at'])
  })

  it('leaves out rejected and already_applied when there are none', async () => {
    const out = await preview(tracedWrite(binding, KEY), { ...plan, rejected: [] })
    expect(Object.keys(out.preview)).toEqual(['changes', 'impact'])
  })
})

describe('previewWrite under a policy', () => {
  const BULK: PolicyDocument = {
    rules: [
      { id: 'bulk', when: { targets_over: 1 }, decision: 'approve' },
      { id: 'huge', when: { size_over: 100 }, decision: 'deny' },
    ],
  }
  const gated = (doc: PolicyDocument) => {
    const gate = fakeGate(doc)
    return tracedWrite({ ...binding, policy: gate.policy.digest }, KEY, { gate })
  }

  it('a held change carries the approval request of exactly this token, call and targets', async () => {
    const w = gated(BULK)
    const out = await preview(w)
    const { claims } = verifyToken(KEY, out.confirm_token, w.call.binding, NOW)
    const request = decodeRequest(out.approval!.request)!
    expect(out.approval).toEqual({
      request_id: request.id,
      rule: 'bulk',
      required: 1,
      request: request.encoded,
      approve_command: `tasks approve ${request.encoded} --key <path to your ssh ed25519 key>`,
    })
    expect(request.request).toMatchObject({
      command: 'task:delete',
      args: binding.args,
      principal: binding.principal,
      target_count: 2,
      targets: [
        ['1', 'v1'],
        ['2', 7],
      ],
      policy: w.call.binding.policy,
      token_id: claims!.id,
      expires_at: out.expires_at,
    })
    expect(w.facts).toEqual([
      { policy: expect.objectContaining({ decision: 'approve', rule: 'bulk' }) },
      { token_id: claims!.id },
    ])
  })

  it.each([
    ['no targets', undefined],
    ['none', []],
    ['a pattern', [{ id: 'task-*', version: 1 }, targets[0]!]],
  ])('a held change with %s is E_FORBIDDEN implicit_targets before any key is read: no token', async (_, t) => {
    const w = gated(BULK)
    // The call's own count holds it even when the plan names nothing.
    w.call.gate!.facts.targets = 2
    const error = await refusalOf(preview(w, { changes: [change('x')], ...(t ? { targets: t } : {}) }))
    expect(error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'implicit_targets' } })
    expect(w.trace).toEqual([])
    expect(w.facts.at(-1)).toEqual({ mode: 'refused' })
  })

  it('a plan the policy denies (its size) is E_FORBIDDEN before any key is read: no token', async () => {
    const w = gated(BULK)
    expect(await refusalOf(preview(w, { ...plan, size: 101 }))).toMatchObject({
      code: 'E_FORBIDDEN',
      details: { reason: 'policy_denied', rule: 'huge' },
    })
    expect(w.trace).toEqual([])
    expect(w.facts.some((f) => 'token_id' in f)).toBe(false)
  })

  it('a change the policy allows, or holds only in shadow mode, carries no approval', async () => {
    expect((await preview(gated({ rules: [] }))).approval).toBeUndefined()
    expect((await preview(gated({ ...BULK, mode: 'shadow' }))).approval).toBeUndefined()
  })
})

describe('dryRunCommand: the one builder of every dry_run_command', () => {
  const start = () => invocation('tasks')

  it('is the same call without --confirm and its token (either spelling), ending in one --dry-run', () => {
    expect(dryRunCommand('tasks', 'task:delete', ['1', '--confirm', 'ct_3.a.b', '--force'])).toBe(
      `${start()} task delete 1 --force --dry-run`,
    )
    expect(dryRunCommand('tasks', 'task:delete', ['--confirm=ct_3.a.b', '1', '--dry-run'])).toBe(
      `${start()} task delete 1 --dry-run`,
    )
    expect(dryRunCommand('tasks', 'sync', [])).toBe(`${start()} sync --dry-run`)
    // A trailing --confirm with no token drops nothing else.
    expect(dryRunCommand('tasks', 'sync', ['--all', '--confirm'])).toBe(`${start()} sync --all --dry-run`)
  })

  it('keeps every word after -- as an argument (even one spelled --confirm or --dry-run), the flag before it', () => {
    expect(dryRunCommand('tasks', 'create', ['--title', 'x', '--', '--confirm', '--dry-run'])).toBe(
      `${start()} create --title x --dry-run -- --confirm --dry-run`,
    )
  })

  it('quotes a hostile word so the printed command runs it as one argument', () => {
    expect(dryRunCommand('tasks', 'create', ['--title', "a'; rm -rf ~; echo '", '$(id)'])).toBe(
      `${start()} create --title 'a'\\''; rm -rf ~; echo '\\''' '$(id)' --dry-run`,
    )
  })
})

describe('confirmationRequired', () => {
  it('is E_CONFIRMATION_REQUIRED naming the command and the dry-run to run, and nothing else', () => {
    const error = confirmationRequired('tasks', 'task:delete', ['1', '--force'])
    expect(error).toMatchObject({
      code: 'E_CONFIRMATION_REQUIRED',
      message: 'task delete changes state: run it with --dry-run first, then --confirm <token>',
    })
    expect(error.details).toEqual({ dry_run_command: `${invocation('tasks')} task delete 1 --force --dry-run` })
  })
})
