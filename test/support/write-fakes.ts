// In-memory stand-ins for what the write flow asks of a command (its steps, the single-use ledger, the approval
// store), for the tests of the policy gate and approvals over fake steps.
import type { ApprovalStore } from '../../src/approvals/store.js'
import type { TokenLedger } from '../../src/confirm/ledger.js'
import type { AgentError } from '../../src/errors/agent-error.js'
import { newWriteState, type WriteSteps } from '../../src/write/call.js'
import type { Plan } from '../../src/write/plan.js'
import { UNDECLARED_RISK } from '../../src/write/risk.js'

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
