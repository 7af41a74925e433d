// The write flow's order (src/write/flow.ts) in-process, over traced fake steps: the policy gate before the token,
// a finished idempotency key's replay before the refusal, E_CONFIRMATION_REQUIRED before any key, ledger or plan is
// read, and a refused token naming the dry-run to run. Adversarial on purpose: tokens for another call, replayed,
// expired or forged, and faults thrown by the steps; each fails closed (nothing applied, no token consumed).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { IdempotencyLedger, IdempotencyLookup } from '../../../src/confirm/idempotency.js'
import type { Target } from '../../../src/confirm/targets.js'
import { type Binding, mintToken } from '../../../src/confirm/token.js'
import { AgentError } from '../../../src/errors/agent-error.js'
import type { PolicyDocument } from '../../../src/policy/policy.js'
import { invocation } from '../../../src/runtime/invocation.js'
import type { WriteRequest } from '../../../src/write/flags.js'
import { type WriteOrigin, writeFlow } from '../../../src/write/flow.js'
import type { Plan } from '../../../src/write/plan.js'
import { DELETE_BINDING, fakeGate, refusalOf, type TracedWrite, tracedWrite } from '../../support/write-fakes.js'

const KEY = Buffer.alloc(32, 5)
const NOW = 1_800_000_000_000
const TTL_S = 60
const binding: Binding = DELETE_BINDING
const targets: Target[] = [
  { id: '1', version: 'v1' },
  { id: '2', version: 'v1' },
]
/** The dry-run of `tasks task delete 1 2`, as every refusal of a presented token names it. */
const DRY_RUN = () => `${invocation('tasks')} task delete 1 2 --dry-run`

/** A token as the dry-run of this call mints it (or of another, with `over`). */
const token = (over: Partial<Binding> = {}, at = NOW, kid: string | null = 'k2') =>
  mintToken(KEY, { ...binding, ...over }, targets, at, TTL_S * 1000, kid)

const request = (over: Partial<WriteRequest> = {}): WriteRequest => ({
  dryRun: false,
  token: undefined,
  key: undefined,
  bound: binding.args,
  ...over,
})

/** Where the call came from: `tasks task delete 1 2` and the flags of `request`. */
function origin(r: WriteRequest, spelling: 'split' | 'joined' = 'split'): WriteOrigin {
  const flags =
    r.token === undefined
      ? r.dryRun
        ? ['--dry-run']
        : []
      : spelling === 'split'
        ? ['--confirm', r.token]
        : [`--confirm=${r.token}`]
  return { bin: 'tasks', argv: ['1', '2', ...flags], ttlSeconds: TTL_S }
}

const flow = (w: TracedWrite, r: WriteRequest, spelling?: 'split' | 'joined') =>
  writeFlow(w.steps, r, w.call, origin(r, spelling))

const traced = (options: Parameters<typeof tracedWrite>[2] = {}) => tracedWrite(binding, KEY, { targets, ...options })

/** An idempotency ledger whose lookup answers `seen` and whose run applies. */
function idem(seen: IdempotencyLookup | (() => Promise<IdempotencyLookup>)): IdempotencyLedger {
  return {
    lookup: typeof seen === 'function' ? seen : async () => seen,
    run: async (_scope, _command, _key, _args, write) => ({ data: await write(), replayed: false }),
  } as IdempotencyLedger
}

const DENY_PROD: PolicyDocument = { rules: [{ id: 'no-prod', when: { profile: ['prod'] }, decision: 'deny' }] }

/** A gated call: its binding carries the policy's digest, as the command's does. */
function gated(doc: PolicyDocument, profile = 'default', options: Parameters<typeof tracedWrite>[2] = {}) {
  const gate = fakeGate(doc, { profile, targets: 2 })
  const bound = { ...binding, policy: gate.policy.digest }
  return { w: tracedWrite(bound, KEY, { targets, gate, ...options }), bound }
}

beforeEach(() => {
  vi.spyOn(Date, 'now').mockReturnValue(NOW + 1_000)
})
afterEach(() => {
  vi.restoreAllMocks()
})

describe('writeFlow: what answers first', () => {
  it('neither flag: E_CONFIRMATION_REQUIRED with the dry-run to run, before any key, ledger or plan is read', async () => {
    const w = traced()
    const error = await refusalOf(flow(w, request()))
    expect(error).toMatchObject({
      code: 'E_CONFIRMATION_REQUIRED',
      message: 'task delete changes state: run it with --dry-run first, then --confirm <token>',
      details: { dry_run_command: DRY_RUN() },
    })
    expect(Object.keys(error.details)).toEqual(['dry_run_command'])
    expect(w.trace).toEqual([])
    expect(w.facts).toEqual([])
  })

  it.each(['a valid token', '--dry-run', 'neither flag'])(
    'the policy gate judges before the token: a denied call with %s is E_FORBIDDEN, no step run',
    async (kind) => {
      const { w, bound } = gated(DENY_PROD, 'prod')
      const presented =
        kind === 'a valid token'
          ? request({ token: mintToken(KEY, bound, targets, NOW, TTL_S * 1000, 'k2').token })
          : request({ dryRun: kind === '--dry-run' })
      const error = await refusalOf(flow(w, presented))
      expect(error).toMatchObject({ code: 'E_FORBIDDEN', details: { reason: 'policy_denied', rule: 'no-prod' } })
      // A deny needs no new dry-run: none is named.
      expect(error.details).not.toHaveProperty('dry_run_command')
      expect(w.trace).toEqual([])
      expect(w.used.size).toBe(0)
      expect(w.facts).toEqual([
        { policy: expect.objectContaining({ decision: 'deny', rule: 'no-prod', shadow: false }) },
        { mode: 'refused' },
      ])
    },
  )

  it('a gate that allows is recorded before the token is read; the confirm then runs in its order and applies', async () => {
    const { w, bound } = gated(DENY_PROD)
    const { token: t, claims } = mintToken(KEY, bound, targets, NOW, TTL_S * 1000, 'k2')
    expect(await flow(w, request({ token: t }))).toEqual({ applied: ['1', '2'] })
    expect(w.trace).toEqual(['keyRing', 'tokenLedger', 'plan', 'apply'])
    const allow = { policy: expect.objectContaining({ decision: 'allow', shadow: false }) }
    expect(w.facts).toEqual([allow, { token_id: claims.id }, allow])
    expect([...w.used]).toEqual([claims.id])
  })

  it('a finished idempotency key replays before the refusal: no flag needed, no key, plan or apply', async () => {
    const w = traced({ idem: idem({ state: 'done', data: { recorded: true } }) })
    expect(await flow(w, request())).toEqual({ recorded: true })
    expect(w.trace).toEqual(['idempotencyLedger', 'replayed'])
    expect(w.facts).toEqual([{ mode: 'replay' }])
  })

  it('a finished key under --dry-run is previewed afresh with a token, never answered from the record', async () => {
    const w = traced({ idem: idem({ state: 'done', data: { recorded: true } }) })
    const out = (await flow(w, request({ dryRun: true }))) as { confirm_token: string }
    expect(out.confirm_token).toMatch(/^ct_3\./)
    expect(w.trace).toEqual(['idempotencyLedger', 'plan', 'keyRing'])
    expect(w.facts).toEqual([{ token_id: expect.any(String) }])
  })

  it('a key with no finished run and neither flag: E_CONFIRMATION_REQUIRED after the lookup, before any plan', async () => {
    const w = traced({ idem: idem({ state: 'none' }) })
    expect(await refusalOf(flow(w, request()))).toMatchObject({ code: 'E_CONFIRMATION_REQUIRED' })
    expect(w.trace).toEqual(['idempotencyLedger'])
  })

  it('a key reused with other arguments is E_CONFLICT before the refusal, naming no dry-run', async () => {
    const w = traced({ idem: idem({ state: 'mismatch' }) })
    const error = await refusalOf(flow(w, request()))
    expect(error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'idempotency_key_reused' } })
    expect(error.details).not.toHaveProperty('dry_run_command')
    expect(w.trace).toEqual(['idempotencyLedger'])
  })

  it('an idempotency store that fails fails closed: its error, nothing planned, minted or applied', async () => {
    const down = new AgentError('E_IO', 'idempotency store unreadable')
    const w = traced({ idem: idem(() => Promise.reject(down)) })
    for (const r of [request(), request({ dryRun: true })]) expect(await refusalOf(flow(w, r))).toBe(down)
    expect(w.trace).toEqual(['idempotencyLedger', 'idempotencyLedger'])
    expect(w.facts).toEqual([])
  })
})

describe('writeFlow --dry-run', () => {
  it('a partial batch is previewed without the items that landed, which it names; the token binds the rest', async () => {
    const w = traced({ idem: idem({ state: 'partial', landed: [{ id: '1', action: 'delete' }] }) })
    const out = (await flow(w, request({ dryRun: true }))) as {
      preview: { changes: Array<{ id: string }>; already_applied: unknown; impact: { targets: string[] } }
      confirm_token: string
    }
    expect(out.preview.changes.map((c) => c.id)).toEqual(['2'])
    expect(out.preview.already_applied).toEqual([{ id: '1', action: 'delete' }])
    expect(out.preview.impact.targets).toEqual(['2'])
    // Confirmed later with the same key: the landed item stays out, so the token's targets still match.
    const again = traced({ idem: idem({ state: 'partial', landed: [{ id: '1', action: 'delete' }] }) })
    expect(await flow(again, request({ token: out.confirm_token }))).toEqual({ applied: ['2'] })
  })

  it('a plan that only rejects items answers their batch result: no key read, no token minted', async () => {
    const w = traced({
      plan: async () => ({ changes: [], targets, rejected: [{ id: '1', error: new AgentError('E_NOT_FOUND', 'x') }] }),
    })
    expect(await flow(w, request({ dryRun: true }))).toEqual({ rejected: ['1'] })
    expect(w.trace).toEqual(['plan', 'rejectedBatch'])
    expect(w.facts).toEqual([])
  })

  it('a signal during the plan stops the dry-run: no key read, no token minted', async () => {
    const controller = new AbortController()
    const reason = new AgentError('E_INTERRUPTED', 'interrupted by SIGINT', { details: { signal: 'SIGINT' } })
    const w = traced({
      signal: controller.signal,
      plan: async () => {
        controller.abort(reason)
        return { changes: [], targets }
      },
    })
    expect(await refusalOf(flow(w, request({ dryRun: true })))).toBe(reason)
    expect(w.trace).toEqual(['plan'])
    expect(w.facts).toEqual([])
  })

  it('a plan that throws fails the dry-run with its error: no token minted', async () => {
    const broken = new Error('upstream down')
    const w = traced({
      plan: async () => {
        throw broken
      },
    })
    expect(await refusalOf(flow(w, request({ dryRun: true })))).toBe(broken)
    expect(w.trace).toEqual(['plan'])
    expect(w.facts).toEqual([])
  })

  it('its token confirms exactly that call once; replayed, it is already_used and names the dry-run', async () => {
    const used = new Set<string>()
    const dry = (await flow(traced({ used }), request({ dryRun: true }))) as { confirm_token: string }
    const first = traced({ used })
    expect(await flow(first, request({ token: dry.confirm_token }))).toEqual({ applied: ['1', '2'] })
    const replayed = traced({ used })
    const error = await refusalOf(flow(replayed, request({ token: dry.confirm_token })))
    expect(error).toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'already_used', dry_run_command: DRY_RUN() },
    })
    expect(replayed.trace).toEqual(['keyRing', 'tokenLedger'])
    expect(replayed.applied).toEqual([])
    expect(used.size).toBe(1)
  })
})

describe('writeFlow --confirm: a refused token names the dry-run to run; nothing is applied or consumed', () => {
  const moved = async (): Promise<Plan<unknown>> => ({
    changes: [],
    targets: [{ id: '1', version: 'v2' }, targets[1]!],
  })
  const grown = async (): Promise<Plan<unknown>> => ({ changes: [], targets: [...targets, { id: '3', version: 'v1' }] })
  const gone = async (): Promise<Plan<unknown>> => {
    throw new AgentError('E_NOT_FOUND', 'no task 1', { details: { id: '1' } })
  }
  const cases: Array<[string, () => string, Parameters<typeof traced>[0]?]> = [
    ['tampered', () => `${token().token.slice(0, -4)}AAAA`],
    ['unknown_key', () => token({}, NOW, 'k0').token],
    ['other_tool', () => token({ tool: 'fixture\0fixture' }).token],
    ['other_command', () => token({ command: 'task:create' }).token],
    ['other_account', () => token({ principal: { account: 'eve', profile: 'default' } }).token],
    ['args_changed', () => token({ args: { ids: ['1', '3'] } }).token],
    ['policy_changed', () => token({ policy: 'a-policy-that-went' }).token],
    ['expired', () => token({}, NOW - TTL_S * 1000).token],
    ['not_yet_valid', () => token({}, NOW + 3_600_000).token],
    ['state_drift', () => token().token, { plan: moved }],
    ['target_changed', () => token().token, { plan: grown }],
    ['state_drift', () => token().token, { plan: gone }],
  ]

  it.each(cases)('%s', async (reason, presented, options) => {
    for (const spelling of ['split', 'joined'] as const) {
      const w = traced(options)
      const t = presented()
      const error = await refusalOf(flow(w, request({ token: t }), spelling))
      expect(error).toMatchObject({ code: 'E_CONFLICT', details: { reason, dry_run_command: DRY_RUN() } })
      expect(error.details.dry_run_command).not.toContain(t)
      expect(w.trace).not.toContain('apply')
      expect(w.used.size).toBe(0)
      expect(w.facts.at(-1)).toEqual({ mode: 'refused' })
    }
  })

  it('a token replayed after its use is already_used before any plan, and names the dry-run', async () => {
    const { token: t, claims } = token()
    const w = traced({ used: new Set([claims.id]) })
    expect(await refusalOf(flow(w, request({ token: t })))).toMatchObject({
      details: { reason: 'already_used', token_id: claims.id, dry_run_command: DRY_RUN() },
    })
    expect(w.trace).toEqual(['keyRing', 'tokenLedger'])
  })

  it('other failures pass on unchanged, naming no dry-run: a step fault, a store fault, a reused key', async () => {
    const broken = new Error('upstream down')
    const planFault = traced({
      plan: async () => {
        throw broken
      },
    })
    expect(await refusalOf(flow(planFault, request({ token: token().token })))).toBe(broken)
    expect(planFault.used.size).toBe(0)

    const io = new AgentError('E_IO', 'ledger unreadable')
    const ledgerFault = traced()
    ledgerFault.steps.tokenLedger = () => Promise.reject(io)
    const stored = await refusalOf(flow(ledgerFault, request({ token: token().token })))
    expect(stored).toBe(io)
    expect(stored.details).not.toHaveProperty('dry_run_command')

    const reused = traced({ idem: idem({ state: 'mismatch' }) })
    const conflict = await refusalOf(flow(reused, request({ token: token().token })))
    expect(conflict).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'idempotency_key_reused' } })
    expect(conflict.details).not.toHaveProperty('dry_run_command')
    for (const w of [planFault, ledgerFault, reused]) expect(w.trace).not.toContain('apply')
  })
})
