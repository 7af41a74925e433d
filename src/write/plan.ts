import type { BatchItem, Change } from '../confirm/preview.js'
import type { Target } from '../confirm/targets.js'
import type { AgentError } from '../errors/agent-error.js'
import type { JobContext } from '../jobs/runtime.js'

/**
 * What `plan()` returns: the preview, what the token binds, and private state for `apply()`. `state` is required
 * when `S` is (so `apply(plan)` reads `plan.state.title` without `!`), optional when `S` admits `undefined`.
 */
export type Plan<S = unknown> = {
  /** The changes, shown in the dry-run preview. */
  changes: Change[]
  /** The target resources and their versions (etag, changekey, updated_at); bound into the token. */
  targets?: Target[]
  /** Batch items that cannot be done; reported per item, never hiding the others. */
  rejected?: Array<{ id: string; error: AgentError }>
  /** The size of the change in the command's own unit (tasks imported, bytes sent): a policy can gate on it. */
  size?: number
} & (undefined extends S
  ? {
      /** Private state handed to `apply()`; never printed. */
      state?: S
    }
  : {
      /** Private state handed to `apply()`; never printed. */
      state: S
    })

/** What the worker of an async write receives: the plan recomputed there and checked against the confirmed one. */
export type WriteJobContext<S = unknown> = JobContext & {
  /** The plan recomputed in the worker, whose targets and versions are those that were confirmed. */
  plan: Plan<S>
}

/** The rejected items of a plan, as batch items. */
export function rejectedItems(plan: Plan<unknown>): BatchItem[] {
  return (plan.rejected ?? []).map((r) => ({
    id: r.id,
    ok: false,
    error: { code: r.error.code, message: r.error.message },
  }))
}

/** A plan with nothing left to do but items it rejects: answered as a batch without minting or applying. */
export function onlyRejected(plan: Plan<unknown>): boolean {
  return plan.changes.length === 0 && (plan.rejected?.length ?? 0) > 0
}

/** The clock of every confirm-token decision (issue, expiry, ledger pruning). No setting moves it. */
export function clock(): number {
  return Date.now()
}
