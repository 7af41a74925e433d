// The `--confirm` check order and its refusals in-process, over fake steps (key ring, ledgers, clock, plan): they
// carry the 100% coverage gate of src/write/confirm-flow.ts, refusals.ts and call.ts. Adversarial on purpose:
// forged, tampered, replayed, expired, foreign tool/command/account/arguments, drift, ledger faults — each must
// fail closed (nothing applied, the token not consumed) and be audited `refused`. The command-level cases are in
// test/cli/write/write-trust.test.ts and test/unit/write/write-safety.test.ts (its races and clock in test/cli/write/).

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { AuditFacts } from '../../../src/audit/record.js'
import type { IdempotencyLedger, IdempotencyLookup } from '../../../src/confirm/idempotency.js'
import type { TokenLedger } from '../../../src/confirm/ledger.js'
import type { Target } from '../../../src/confirm/targets.js'
import { type Binding, mintToken } from '../../../src/confirm/token.js'
import { AgentError } from '../../../src/errors/agent-error.js'
import { beforeChange, isBeforeChange, noteChange } from '../../../src/errors/before-change.js'
import { lookupKey, newWriteState, replay, type WriteCall, type WriteSteps } from '../../../src/write/call.js'
import { confirmWrite } from '../../../src/write/confirm-flow.js'
import type { Plan } from '../../../src/write/plan.js'
import { driftError, goneOrRethrow, refuse } from '../../../src/write/refusals.js'
import { UNDECLARED_RISK } from '../../../src/write/risk.js'

const KEY = Buffer.alloc(32, 7)
const OLD_KEY = Buffer.alloc(32, 9)
const NOW = 1_800_000_000_000
const TTL = 60_000
const binding: Binding = {
  tool: 'tasks@tasks',
  command: 'tasks:delete',
  args: { id: 't1' },
  principal: { account: 'ann' },
}
const targets: Target[] = [{ id: 't1', version: 'v1' }]
const change = { action: 'delete', resource: 'task', id: 't1', before: null, after: null }

/** A token as the dry-run mints it (key `k2` by default), `at` ms on the clock. */
const token = (over: Partial<Binding> = {}, options: { at?: number; kid?: string | null; key?: Buffer } = {}) =>
  mintToken(
    options.key ?? KEY,
    { ...binding, ...over },
    targets,
    options.at ?? NOW,
    TTL,
    'kid' in options ? options.kid : 'k2',
  )

/** An in-memory token ledger; `fault` makes one of its calls fail as a broken store would. */
function ledger(fault?: 'isUsed' | 'consume'): TokenLedger & { used: Set<string>; released: string[] } {
  const used = new Set<string>()
  const released: string[] = []
  const broken = () => Promise.reject(new AgentError('E_IO', 'ledger unreadable'))
  return {
    used,
    released,
    isUsed: async (id) => (fault === 'isUsed' ? broken() : used.has(id)),
    consume: async (id) => {
      if (fault === 'consume') return broken()
      if (used.has(id)) return false
      used.add(id)
      return true
    },
    release: async (id) => {
      used.delete(id)
      released.push(id)
    },
  }
}

type Fakes = {
  steps: WriteSteps<unknown>
  call: WriteCall
  facts: AuditFacts[]
  used: ReturnType<typeof ledger>
  applied: Plan<unknown>[]
  replayed: number
}

/** Fake steps around one call; `over` replaces any hook, `idem` gives the call an idempotency key. */
function fakes(
  over: Partial<WriteSteps<unknown>> & { used?: ReturnType<typeof ledger>; idem?: IdempotencyLedger } = {},
): Fakes {
  const facts: AuditFacts[] = []
  const applied: Plan<unknown>[] = []
  const used = over.used ?? ledger()
  const out: Fakes = {
    facts,
    used,
    applied,
    replayed: 0,
    call: {
      binding,
      audit: (f) => void facts.push(f),
      idem: over.idem ? { key: 'k-1', scope: 'scope' } : undefined,
    },
    steps: {
      id: binding.command,
      risk: UNDECLARED_RISK,
      state: newWriteState(),
      signal: new AbortController().signal,
      keyRing: async () => ({
        current: { id: 'k2', key: KEY },
        keys: new Map([
          ['k2', KEY],
          ['k1', OLD_KEY],
        ]),
      }),
      tokenLedger: async () => used,
      idempotencyLedger: async () => over.idem ?? unreachable('idempotency ledger'),
      plan: async () => ({ changes: [change], targets }),
      apply: async (plan) => {
        applied.push(plan)
        return { deleted: 't1' }
      },
      replayed: () => void out.replayed++,
      rejectedBatch: () => ({ rejected: true }),
      ...over,
    },
  }
  return out
}

function unreachable(what: string): never {
  throw new Error(`${what} must not be reached`)
}

/** The `E_CONFLICT` a refused call throws, with nothing applied and no token consumed. */
async function refused(f: Fakes, presented: string): Promise<AgentError> {
  const error = await confirmWrite(f.steps, presented, f.call).then(
    () => unreachable('success'),
    (e: unknown) => e as AgentError,
  )
  expect(f.applied).toEqual([])
  expect(f.used.used.size).toBe(0)
  expect(f.facts.at(-1)).toEqual({ mode: 'refused' })
  return error
}

beforeEach(() => {
  vi.spyOn(Date, 'now').mockReturnValue(NOW + 1_000)
})
afterEach(() => {
  vi.restoreAllMocks()
})

describe('--confirm: what the token binds, checked before any state is read', () => {
  it('applies a valid token once: consumed, audited with its id, the confirmed plan kept for a job', async () => {
    const f = fakes()
    const { token: t, claims } = token()
    expect(await confirmWrite(f.steps, t, f.call)).toEqual({ deleted: 't1' })
    expect(f.applied).toHaveLength(1)
    expect(f.used.used.has(claims.id)).toBe(true)
    expect(f.facts).toEqual([{ token_id: claims.id }])
    // With what the job's worker recomputes a held change's approval request from: the principal and the expiry.
    expect(f.steps.state.confirmed).toEqual({
      token_id: claims.id,
      targets,
      expires_at: new Date(claims.expiresAt).toISOString(),
      principal: binding.principal,
    })
  })

  it('refuses garbage and a forged MAC as tampered, naming no token id', async () => {
    for (const forged of ['garbage', `${token().token.slice(0, -4)}AAAA`]) {
      const error = await refused(fakes({ plan: async () => unreachable('plan') }), forged)
      expect(error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'tampered' } })
      expect(error.details).not.toHaveProperty('token_id')
    }
  })

  it('refuses a token signed by a key that is no longer in the ring', async () => {
    const error = await refused(fakes(), token({}, { kid: 'k0' }).token)
    expect(error.details).toMatchObject({ reason: 'unknown_key' })
    expect(error.details).not.toHaveProperty('token_id')
  })

  it('verifies a token of an older key still in the ring, and one without a key id against a ring keyed by null', async () => {
    expect(await confirmWrite(fakes().steps, token({}, { kid: 'k1', key: OLD_KEY }).token, fakes().call)).toEqual({
      deleted: 't1',
    })
    const f = fakes({ keyRing: async () => ({ current: { id: null, key: KEY }, keys: new Map([[null, KEY]]) }) })
    expect(await confirmWrite(f.steps, token({}, { kid: null }).token, f.call)).toEqual({ deleted: 't1' })
  })

  it.each([
    ['other_tool', { tool: 'other@tool' }],
    ['other_command', { command: 'tasks:create' }],
    ['other_account', { principal: { account: 'eve' } }],
    ['args_changed', { args: { id: 't2' } }],
  ] as const)(
    'refuses a token minted for another call (%s), naming its id, before plan() runs',
    async (reason, over) => {
      const f = fakes({ plan: async () => unreachable('plan') })
      const { token: t, claims } = token(over)
      const error = await refused(f, t)
      expect(error.details).toEqual({ reason, token_id: claims.id, fix: expect.any(String) })
      expect(f.facts[0]).toEqual({ token_id: claims.id })
    },
  )

  it('refuses an expired token and one from the future on the same clock', async () => {
    expect((await refused(fakes(), token({}, { at: NOW - TTL - 1 }).token)).details).toMatchObject({
      reason: 'expired',
    })
    expect((await refused(fakes(), token({}, { at: NOW + 3_600_000 }).token)).details).toMatchObject({
      reason: 'not_yet_valid',
    })
  })
})

describe('--confirm: single use, then the plan, then the commit point', () => {
  it('refuses a replayed token (already used) before plan() runs', async () => {
    const { token: t, claims } = token()
    const used = ledger()
    used.used.add(claims.id)
    const f = fakes({ used, plan: async () => unreachable('plan') })
    const error = await confirmWrite(f.steps, t, f.call).catch((e: AgentError) => e)
    expect(error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'already_used', token_id: claims.id } })
    expect(f.applied).toEqual([])
    expect(f.facts.at(-1)).toEqual({ mode: 'refused' })
  })

  it('fails closed when the token ledger cannot be read or written: nothing applied', async () => {
    for (const fault of ['isUsed', 'consume'] as const) {
      const f = fakes({ used: ledger(fault) })
      await expect(confirmWrite(f.steps, token().token, f.call)).rejects.toMatchObject({ code: 'E_IO' })
      expect(f.applied).toEqual([])
    }
  })

  it('lets exactly one of two racing confirms past the commit point', async () => {
    const used = ledger()
    const { token: t } = token()
    const results = await Promise.allSettled([
      confirmWrite(fakes({ used }).steps, t, fakes().call),
      confirmWrite(fakes({ used }).steps, t, fakes().call),
    ])
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
      details: { reason: 'already_used' },
    })
  })

  it('reports targets that moved since the dry-run as drift, and a target that appeared as another call', async () => {
    const f = fakes({ plan: async () => ({ changes: [change], targets: [{ id: 't1', version: 'v2' }] }) })
    const { token: t, claims } = token()
    expect(await refused(f, t)).toMatchObject({
      code: 'E_CONFLICT',
      message: 'the targets moved since the dry-run: t1 (version v1 then, v2 now); nothing was changed',
      details: {
        reason: 'state_drift',
        token_id: claims.id,
        drift: [{ id: 't1', version_then: 'v1', version_now: 'v2' }],
      },
    })
    const more = fakes({ plan: async () => ({ changes: [change], targets: [...targets, { id: 't9', version: 1 }] }) })
    expect((await refused(more, t)).details).toMatchObject({ reason: 'target_changed', drift: [] })
  })

  it('turns a target the plan can no longer find into drift (gone), and rethrows any other plan failure', async () => {
    const gone = fakes({
      plan: async () => {
        throw new AgentError('E_NOT_FOUND', 'no task t1', { details: { id: 't1' } })
      },
    })
    expect(await refused(gone, token().token)).toMatchObject({
      message: 'the targets moved since the dry-run: t1 (version v1 then, gone now); nothing was changed',
      details: { reason: 'state_drift', drift: [{ id: 't1', version_now: null, gone: true }] },
    })
    const broken = new Error('upstream down')
    const failing = fakes({
      plan: async () => {
        throw broken
      },
    })
    expect(await refused(failing, token().token)).toBe(broken)
  })

  it('judges expiry again after a slow plan, right before the commit point', async () => {
    const f = fakes({
      plan: async () => {
        vi.spyOn(Date, 'now').mockReturnValue(NOW + TTL + 1)
        return { changes: [change], targets }
      },
    })
    expect((await refused(f, token().token)).details).toMatchObject({ reason: 'expired' })
  })

  it('confirms a plan without targets against a token minted for none', async () => {
    const f = fakes({ plan: async () => ({ changes: [change] }) })
    const { token: t, claims } = mintToken(KEY, binding, [], NOW, TTL, 'k2')
    expect(await confirmWrite(f.steps, t, f.call)).toEqual({ deleted: 't1' })
    expect(f.steps.state.confirmed).toMatchObject({ token_id: claims.id, targets: [] })
  })

  it('answers a plan that only rejects items with their batch result, consuming nothing', async () => {
    const f = fakes({
      plan: async () => ({
        changes: [],
        targets,
        rejected: [{ id: 'x', error: new AgentError('E_VALIDATION', 'no') }],
      }),
    })
    expect(await confirmWrite(f.steps, token().token, f.call)).toEqual({ rejected: true })
    expect(f.used.used.size).toBe(0)
  })

  it('gives the token back when apply fails before any change, and keeps it consumed once something changed', async () => {
    const early = fakes({
      apply: async () => {
        throw beforeChange(new AgentError('E_IO', 'lock busy'))
      },
    })
    const { token: t, claims } = token()
    await expect(confirmWrite(early.steps, t, early.call)).rejects.toMatchObject({ code: 'E_IO' })
    expect(early.used.released).toEqual([claims.id])

    const late = fakes({
      apply: async () => {
        noteChange()
        throw beforeChange(new AgentError('E_IO', 'second file'))
      },
    })
    const error = await confirmWrite(late.steps, t, late.call).catch((e: unknown) => e)
    expect(isBeforeChange(error)).toBe(false)
    expect(late.used.released).toEqual([])
    expect(late.used.used.has(claims.id)).toBe(true)

    const plain = fakes({
      apply: async () => {
        throw new Error('boom')
      },
    })
    await expect(confirmWrite(plain.steps, t, plain.call)).rejects.toThrow('boom')
    expect(plain.used.released).toEqual([])
  })

  it('stops at the commit point when a signal arrived during the plan: nothing consumed, nothing applied', async () => {
    const controller = new AbortController()
    const reason = new AgentError('E_INTERRUPTED', 'interrupted by SIGINT', { details: { signal: 'SIGINT' } })
    const f = fakes({
      signal: controller.signal,
      plan: async () => {
        controller.abort(reason)
        return { changes: [change], targets }
      },
    })
    await expect(confirmWrite(f.steps, token().token, f.call)).rejects.toBe(reason)
    expect(f.applied).toEqual([])
    expect(f.used.used.size).toBe(0)
  })

  it('gives the token back when a signal arrived while it was being consumed: apply never runs', async () => {
    const controller = new AbortController()
    const used = ledger()
    const consume = used.consume
    used.consume = async (id, expiresAt, now) => {
      controller.abort(new AgentError('E_INTERRUPTED', 'interrupted by SIGTERM', { details: { signal: 'SIGTERM' } }))
      return consume(id, expiresAt, now)
    }
    const f = fakes({ signal: controller.signal, used })
    const { token: t, claims } = token()
    await expect(confirmWrite(f.steps, t, f.call)).rejects.toMatchObject({ code: 'E_INTERRUPTED' })
    expect(f.applied).toEqual([])
    expect(used.released).toEqual([claims.id])
  })
})

describe('--confirm with an idempotency key', () => {
  /** A fake idempotency ledger answering `seen` to lookup and `ran` to run. */
  function idem(seen: IdempotencyLookup, ran?: { data: unknown; replayed: boolean }): IdempotencyLedger {
    return {
      lookup: async () => seen,
      run: async (_scope, _command, _key, _args, write) => ran ?? { data: await write(), replayed: false },
    } as IdempotencyLedger
  }

  it('replays a finished key without checking single use or applying, audited as a replay', async () => {
    const f = fakes({
      idem: idem({ state: 'done', data: { recorded: 1 } }),
      tokenLedger: async () => unreachable('ledger'),
    })
    expect(await confirmWrite(f.steps, token().token, f.call)).toEqual({ recorded: 1 })
    expect(f.replayed).toBe(1)
    expect(f.facts.at(-1)).toEqual({ mode: 'replay' })
  })

  it('refuses a key reused with other arguments', async () => {
    const f = fakes({ idem: idem({ state: 'mismatch' }) })
    await expect(confirmWrite(f.steps, token().token, f.call)).rejects.toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'idempotency_key_reused' },
    })
    expect(f.applied).toEqual([])
  })

  it('resumes a partial batch without the items that landed, and applies through the ledger', async () => {
    const f = fakes({
      idem: idem({ state: 'partial', landed: [{ id: 't0', action: 'delete' }] }),
      plan: async () => ({ changes: [{ ...change, id: 't0' }, change], targets }),
    })
    expect(await confirmWrite(f.steps, token().token, f.call)).toEqual({ deleted: 't1' })
    expect(f.applied[0]!.changes.map((c) => c.id)).toEqual(['t1'])
    expect([...f.steps.state.landed.keys()]).toEqual(['t0'])
  })

  it('gives the token back when another process finished the same key meanwhile', async () => {
    const f = fakes({ idem: idem({ state: 'none' }, { data: { theirs: 1 }, replayed: true }) })
    const { token: t, claims } = token()
    expect(await confirmWrite(f.steps, t, f.call)).toEqual({ theirs: 1 })
    expect(f.used.released).toEqual([claims.id])
    expect(f.facts.at(-1)).toEqual({ mode: 'replay' })
  })
})

describe('the refusals and the call helpers on their own', () => {
  it('refuse names the token id only when known; lookupKey and replay note what they learn', async () => {
    const facts: AuditFacts[] = []
    const note = (f: AuditFacts) => void facts.push(f)
    expect(refuse(note, 'tampered').details).not.toHaveProperty('token_id')
    expect(refuse(note, 'expired', 'id9').details).toMatchObject({ token_id: 'id9' })
    expect(facts).toEqual([{ mode: 'refused' }, { mode: 'refused' }])
    const { steps } = fakes()
    expect(replay(steps, note, 42)).toBe(42)
    const seen = await lookupKey(
      steps,
      { lookup: async () => ({ state: 'none' }) } as never,
      { key: 'k', scope: 's' },
      {},
    )
    expect(seen).toEqual({ state: 'none' })
  })

  it('driftError names moved targets (long versions shortened), or none; goneOrRethrow passes other errors on', async () => {
    const long = 'abcdef0123456789abcdef'
    expect(driftError('state_drift', [], 'id').message).toBe('the targets moved since the dry-run; nothing was changed')
    expect(
      driftError('target_changed', [{ id: 'a' }, { id: 'b', version_then: long, version_now: 3 } as never], 'id', 'x')
        .message,
    ).toBe('the targets moved since the dry-run: a, b (version abcdef012345… then, 3 now); x')
    const other = new AgentError('E_NETWORK', 'down')
    expect(await goneOrRethrow(other, targets, 'id')).toBe(other)
    const plain = new Error('x')
    expect(await goneOrRethrow(plain, targets, 'id')).toBe(plain)
  })
})
