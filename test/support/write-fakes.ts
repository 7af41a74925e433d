// In-memory stand-ins for what the write flow asks of a command (its steps, the single-use ledger, the approval
// store), for the tests of the write flow, the policy gate and approvals over fake steps.
import type { ApprovalStore } from '../../src/approvals/store.js'
import type { AuditFacts } from '../../src/audit/record.js'
import type { IdempotencyLedger } from '../../src/confirm/idempotency.js'
import type { TokenLedger } from '../../src/confirm/ledger.js'
import type { Target } from '../../src/confirm/targets.js'
import type { Binding } from '../../src/confirm/token.js'
import type { AgentError } from '../../src/errors/agent-error.js'
import { effectivePolicy, type PolicyDocument } from '../../src/policy/policy.js'
import { newWriteState, type WriteCall, type WriteSteps } from '../../src/write/call.js'
import type { GateCall } from '../../src/write/gate.js'
import type { Plan } from '../../src/write/plan.js'
import { UNDECLARED_RISK } from '../../src/write/risk.js'

/** What a token of `tasks task delete 1 2` by ann binds: the call the write-flow tests preview and confirm. */
export const DELETE_BINDING: Binding = {
  tool: 'tasks\0tasks-example',
  command: 'task:delete',
  args: { ids: ['1', '2'] },
  principal: { account: 'ann', profile: 'default' },
}

/** A single-use ledger over `used` (the consumed token ids). */
export function memoryLedger(used: Set<string>): TokenLedger {
  return {
    isUsed: async (id) => used.has(id),
    consume: async (id) => {
      if (used.has(id)) return false
      used.add(id)
      return true
    },
    release: async (id) => void used.delete(id),
  }
}

/** An approval store over `filed` (request id → the signatures filed for it). */
export function memoryApprovals(filed: Map<string, string[]>): ApprovalStore {
  return {
    add: async (id, s) => void filed.set(id, [...(filed.get(id) ?? []), s]),
    list: async (id) => filed.get(id) ?? [],
  }
}

/** The steps of command `id`: one confirm key, the ledger, no idempotency, and the given plan and apply. */
export function fakeSteps(
  id: string,
  key: Buffer,
  ledger: TokenLedger,
  hooks: { plan(): Promise<Plan<unknown>>; apply(): Promise<unknown> },
): WriteSteps<unknown> {
  return {
    id,
    risk: UNDECLARED_RISK,
    state: newWriteState(),
    signal: new AbortController().signal,
    keyRing: async () => ({ current: { id: null, key }, keys: new Map([[null, key]]) }),
    tokenLedger: async () => ledger,
    idempotencyLedger: async () => {
      throw new Error('no idempotency here')
    },
    plan: hooks.plan,
    apply: hooks.apply,
    replayed: () => {},
    rejectedBatch: () => ({}),
  }
}

/** The error `p` rejects with; a resolved `p` fails the test. */
export async function refusalOf(p: Promise<unknown>): Promise<AgentError> {
  return p.then(
    () => {
      throw new Error('expected a refusal')
    },
    (e: unknown) => e as AgentError,
  )
}

/** A write call over fake steps that note, in order, which of them the flow asked for. */
export type TracedWrite = {
  steps: WriteSteps<unknown>
  call: WriteCall
  /** The hooks the flow called, in order (`keyRing`, `tokenLedger`, `idempotencyLedger`, `plan`, `apply`, …). */
  trace: string[]
  /** What the flow noted for the audit record, in order. */
  facts: AuditFacts[]
  /** The consumed token ids. */
  used: Set<string>
  /** The plans `apply()` was handed. */
  applied: Plan<unknown>[]
}

/**
 * A traced write of `binding` with a key ring of one key (`kid`, `key`): `plan` answers the plan (default: one
 * change per target), `idem` gives the call an idempotency key and the ledger answering it, `gate` a policy gate.
 */
export function tracedWrite(
  binding: Binding,
  key: Buffer,
  options: {
    kid?: string | null
    targets?: Target[]
    plan?: () => Promise<Plan<unknown>>
    idem?: IdempotencyLedger
    gate?: GateCall
    signal?: AbortSignal
    used?: Set<string>
  } = {},
): TracedWrite {
  const trace: string[] = []
  const facts: AuditFacts[] = []
  const applied: Plan<unknown>[] = []
  const used = options.used ?? new Set<string>()
  const ledger = memoryLedger(used)
  const kid = options.kid === undefined ? 'k2' : options.kid
  const targets = options.targets ?? []
  const defaultPlan = async (): Promise<Plan<unknown>> => ({
    changes: targets.map((t) => ({ action: 'delete', resource: 'task', id: t.id, before: null, after: null })),
    targets,
  })
  const base = fakeSteps(binding.command, key, ledger, { plan: options.plan ?? defaultPlan, apply: async () => {} })
  const steps: WriteSteps<unknown> = {
    ...base,
    signal: options.signal ?? base.signal,
    keyRing: async () => {
      trace.push('keyRing')
      return { current: { id: kid, key }, keys: new Map([[kid, key]]) }
    },
    tokenLedger: async () => {
      trace.push('tokenLedger')
      return ledger
    },
    idempotencyLedger: async () => {
      trace.push('idempotencyLedger')
      if (!options.idem) throw new Error('this call has no idempotency key')
      return options.idem
    },
    plan: async () => {
      trace.push('plan')
      return base.plan()
    },
    apply: async (plan) => {
      trace.push('apply')
      applied.push(plan)
      return { applied: plan.changes.map((c) => c.id) }
    },
    replayed: () => void trace.push('replayed'),
    rejectedBatch: (plan) => {
      trace.push('rejectedBatch')
      return { rejected: (plan.rejected ?? []).map((r) => r.id) }
    },
  }
  const call: WriteCall = {
    binding,
    audit: (f) => void facts.push(f),
    idem: options.idem ? { key: 'key-1', scope: 'scope-1' } : undefined,
    ...(options.gate ? { gate: options.gate } : {}),
  }
  return { steps, call, trace, facts, used, applied }
}

/** The policy gate of a call by `account` under `doc` (approvals filed in `filed`), counting `targets` items. */
export function fakeGate(
  doc: PolicyDocument,
  options: { account?: string; profile?: string; targets?: number; filed?: Map<string, string[]> } = {},
): GateCall {
  const account = options.account ?? 'ann'
  const store = memoryApprovals(options.filed ?? new Map())
  return {
    policy: effectivePolicy(doc, undefined)!,
    facts: {
      command: 'delete',
      kind: 'write',
      risk: UNDECLARED_RISK,
      targets: options.targets ?? 0,
      profile: options.profile ?? 'default',
      account,
    },
    bin: 'tasks',
    approvals: async () => store,
    requester: { account, os_user: 'ci' },
    resume: 'tasks task delete --confirm <token>',
  }
}
