import { withoutLanded } from '../confirm/batch.js'
import type { RejectReason } from '../confirm/token.js'
import { isAgentError } from '../errors/agent-error.js'
import { stopIfInterrupted } from '../errors/interrupted.js'
import { lookupKey, replay, type WriteCall, type WriteSteps } from './call.js'
import { confirmWrite } from './confirm-flow.js'
import { confirmationRequired, dryRunCommand, previewWrite } from './dry-run.js'
import type { WriteRequest } from './flags.js'
import { onlyRejected } from './plan.js'

/**
 * Which refusals of a presented token a fresh dry-run answers (docs/contract.md, "What a token binds"): all of
 * them today. A record, not a list, so a reason added to the token is a type error here until it is decided.
 */
const REDO: Readonly<Record<RejectReason, boolean>> = {
  tampered: true,
  unknown_key: true,
  other_tool: true,
  other_command: true,
  not_yet_valid: true,
  expired: true,
  other_account: true,
  args_changed: true,
  policy_changed: true,
  already_used: true,
  target_changed: true,
  state_drift: true,
}

/** Where the call came from: for the hint of a refused call. */
export type WriteOrigin = { bin: string; argv: readonly string[]; ttlSeconds: number }

/**
 * The write flow of spec 002 §7 once the call is bound: `--confirm` verifies and applies; otherwise a key that
 * already finished replays (not under `--dry-run`); a call with neither flag is then refused with
 * `E_CONFIRMATION_REQUIRED` before any plan is computed (so a missing target, an offline upstream or a missing
 * setting never answers first), and `--dry-run` previews the plan with a token.
 */
export async function writeFlow<S>(
  steps: WriteSteps<S>,
  request: WriteRequest,
  call: WriteCall,
  origin: WriteOrigin,
): Promise<unknown> {
  // The gate judges the call before any of the command's own code runs: a deny stops it here, with no plan read.
  if (call.gate) (await import('./gate.js')).judge(call.gate, undefined, call.audit)
  if (request.token !== undefined) {
    try {
      return await confirmWrite(steps, request.token, call)
    } catch (error) {
      // A refused token or moved targets: a new dry-run is the next step, so name it, runnable as printed.
      if (isAgentError(error) && error.code === 'E_CONFLICT' && REDO[error.details.reason as RejectReason] === true)
        error.details.dry_run_command = dryRunCommand(origin.bin, steps.id, origin.argv)
      throw error
    }
  }
  if (call.idem) {
    const seen = await lookupKey(steps, await steps.idempotencyLedger(), call.idem, request.bound)
    if (seen.state === 'done' && !request.dryRun) return replay(steps, call.audit, seen.data)
  }
  if (!request.dryRun) throw confirmationRequired(origin.bin, steps.id, origin.argv)
  const plan = withoutLanded(await steps.plan(), steps.state.landed)
  stopIfInterrupted(steps.signal)
  if (onlyRejected(plan)) return steps.rejectedBatch(plan)
  return previewWrite(steps, plan, call, origin.ttlSeconds)
}
