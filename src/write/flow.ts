import { withoutLanded } from '../confirm/batch.js'
import { lookupKey, replay, type WriteCall, type WriteSteps } from './call.js'
import { confirmWrite } from './confirm-flow.js'
import { confirmationRequired, previewWrite } from './dry-run.js'
import type { WriteRequest } from './flags.js'
import { onlyRejected } from './plan.js'

/** Where the call came from: for the hint of a refused call. */
export type WriteOrigin = { bin: string; argv: readonly string[]; ttlSeconds: number }

/**
 * The write flow of spec 002 §7 once the call is bound: `--confirm` verifies and applies; otherwise a key that
 * already finished replays (not under `--dry-run`), and the plan is previewed with a token (`--dry-run`) or the
 * call is refused with `E_CONFIRMATION_REQUIRED`.
 */
export async function writeFlow<S>(
  steps: WriteSteps<S>,
  request: WriteRequest,
  call: WriteCall,
  origin: WriteOrigin,
): Promise<unknown> {
  if (request.token !== undefined) return confirmWrite(steps, request.token, call)
  if (call.idem) {
    const seen = await lookupKey(steps, await steps.idempotencyLedger(), call.idem, request.bound)
    if (seen.state === 'done' && !request.dryRun) return replay(steps, call.audit, seen.data)
  }
  const plan = withoutLanded(await steps.plan(), steps.state.landed)
  if (onlyRejected(plan)) return steps.rejectedBatch(plan)
  if (request.dryRun) return previewWrite(steps, plan, call, origin.ttlSeconds)
  throw confirmationRequired(origin.bin, steps.id, origin.argv, plan)
}
