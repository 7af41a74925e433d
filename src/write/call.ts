import type { AuditFacts } from '../audit/record.js'
import type { LandedItem } from '../confirm/batch.js'
import type { IdempotencyLedger, IdempotencyLookup } from '../confirm/idempotency.js'
import type { TokenLedger } from '../confirm/ledger.js'
import type { KeyRing } from '../confirm/secret.js'
import type { Binding } from '../confirm/token.js'
import type { Interruption } from '../errors/interrupted.js'
import type { JobPlan } from '../jobs/types.js'
import type { GateCall } from './gate.js'
import type { Plan } from './plan.js'
import type { Risk } from './risk.js'

/** The state of one write call: held by the command instance, handed to each step of the flow explicitly. */
export type WriteState = {
  /** Items of this batch that landed in an earlier run under the same idempotency key. */
  landed: ReadonlyMap<string, LandedItem>
  /** The call's `--idempotency-key`, if any. */
  idempotencyKey: string | undefined
  /** What the token confirmed (its id, the targets and versions): an async write's job carries it. */
  confirmed: JobPlan | undefined
}

/** A fresh {@link WriteState}. */
export function newWriteState(): WriteState {
  return { landed: new Map(), idempotencyKey: undefined, confirmed: undefined }
}

/** What the flow asks of the command: its hooks, each overridable by the tool. */
export type WriteSteps<S> = {
  id: string
  /** The command's declared risk (the strictest reading when it declares none). */
  risk: Risk
  state: WriteState
  /** The run's signal (or what it says of it): the flow stops at its commit points once it aborted. */
  signal: Interruption
  keyRing(): Promise<KeyRing>
  tokenLedger(): Promise<TokenLedger>
  idempotencyLedger(): Promise<IdempotencyLedger>
  plan(): Promise<Plan<S>>
  apply(plan: Plan<S>): Promise<unknown>
  /** Say `meta.replayed` in the envelope. */
  replayed(): void
  /** The answer to a plan that only rejects items: their batch result. */
  rejectedBatch(plan: Plan<S>): unknown
}

/**
 * What one call binds and records: the token's binding, where the flow notes what its audit record learns (the
 * token's id, a refusal, a replay: a new record each time, never a change to one), the idempotency key in its scope.
 */
export type WriteCall = {
  binding: Binding
  audit: (facts: AuditFacts) => void
  idem: { key: string; scope: string } | undefined
  /** The policy gate, when the tool or its operator has a policy. */
  gate?: GateCall
}

/**
 * What the key already says about this call: a key reused with other arguments is `E_CONFLICT`; a partial batch
 * makes its landed items known to the flow (they are filtered out of the plan).
 */
export async function lookupKey<S>(
  steps: WriteSteps<S>,
  ledger: IdempotencyLedger,
  idem: { key: string; scope: string },
  args: Record<string, unknown>,
): Promise<IdempotencyLookup> {
  const seen = await ledger.lookup(idem.scope, steps.id, idem.key, args)
  if (seen.state === 'mismatch') throw (await import('../confirm/idempotency.js')).keyReused(idem.key)
  if (seen.state === 'partial') steps.state.landed = new Map(seen.landed.map((l) => [l.id, l]))
  return seen
}

/** Answer with the recorded result of an earlier run: audited as a replay, `meta.replayed` set. */
export function replay<S>(steps: WriteSteps<S>, audit: WriteCall['audit'], data: unknown): unknown {
  audit({ mode: 'replay' })
  steps.replayed()
  return data
}
