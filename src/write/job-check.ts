import type { Binding } from '../confirm/token.js'
import { AgentError } from '../errors/agent-error.js'
import type { JobPlan, JobRecord } from '../jobs/types.js'
import type { GateCall } from './gate.js'
import { clock, type Plan } from './plan.js'
import { driftError, goneOrRethrow } from './refusals.js'

/** Where the job came from: the tool's bin and the command (for the fix of a refusal), the policy's digest now. */
type JobOrigin = { bin: string; id: string; policy?: string | undefined }

/**
 * How the worker judges a job's recomputed plan: the policy gate of its own call (the policy loaded now, the facts
 * of the job's arguments and of the worker's principal), and the binding those arguments give (the tool, the
 * command, the arguments and the policy's digest; the principal is the confirm's, from the record).
 */
export type JobGate = {
  gate: GateCall
  binding: Omit<Binding, 'principal'>
}

/**
 * In the worker of an async write: recompute the plan and hand it on only if its targets and versions are exactly
 * those that were confirmed (a file swapped after the confirm is `E_CONFLICT`, nothing applied), under the policy
 * the confirm was judged by (`origin.policy`, the digest now; another is `E_CONFLICT` `policy_changed`), and, when
 * the tool has a policy (`gate`), judged again as the confirm judged it: a deny is `E_FORBIDDEN`; a change the
 * policy holds needs its approvals, verified again here ({@link judgeJob}). The record is the agent's to write, so
 * nothing in it but what an approver's signature binds can let a held change through.
 */
export async function confirmedPlan<S>(
  record: JobRecord,
  plan: () => Promise<Plan<S>>,
  origin: JobOrigin,
  gate?: () => Promise<JobGate>,
): Promise<Plan<S>> {
  const confirmed = record.plan
  if (!confirmed || !Array.isArray(confirmed.targets)) throw unverifiedJob(record.job_id, origin)
  // The same policy, arguments and targets give the same verdict: a policy changed since the confirm stops the job.
  if (confirmed.policy !== origin.policy) {
    throw new AgentError(
      'E_CONFLICT',
      `the policy changed since job ${record.job_id} was confirmed; nothing was applied`,
      { details: { reason: 'policy_changed', token_id: confirmed.token_id, fix: redo(origin) } },
    )
  }
  const { sameTargets, targetDrift } = await import('../confirm/targets.js')
  let planned: Plan<S>
  try {
    planned = await plan()
  } catch (error) {
    throw await goneOrRethrow(error, confirmed.targets, confirmed.token_id)
  }
  if (!sameTargets(planned.targets ?? [], confirmed.targets)) {
    const { reason, drift } = targetDrift(confirmed.targets, planned.targets ?? [])
    throw driftError(reason, drift, confirmed.token_id, 'the job changed nothing')
  }
  if (gate) await judgeJob(record.job_id, confirmed, planned, await gate(), origin)
  return planned
}

/**
 * The gate again, in the worker, on the plan it recomputed: judged on the worker's principal and on the one the
 * confirm bound (the strictest verdict holds). A held change needs, before its token's expiry, enough approvals of
 * the request recomputed exactly as `--confirm` did (tool, command, arguments, the confirm's principal, targets and
 * versions, policy, token id, expiry), by approvers who are neither principal. Short is `E_FORBIDDEN`: the token is
 * spent, so there is nothing to resume; a new dry-run, its approval and its confirm are the way.
 */
async function judgeJob(
  jobId: string,
  confirmed: JobPlan,
  planned: Plan<unknown>,
  job: JobGate,
  origin: JobOrigin,
): Promise<void> {
  const gates = await import('./gate.js')
  // The worker's audit record is its `job worker` call's, which a fleet worker shares among every job it serves:
  // the job's own record carries the outcome.
  const audit = () => {}
  const recorded = confirmed.principal
  const verdicts = [gates.judge(job.gate, planned, audit)]
  if (recorded) {
    const facts = { ...job.gate.facts, profile: text(recorded.profile), account: text(recorded.account) }
    verdicts.push(gates.judge({ ...job.gate, facts }, planned, audit))
  }
  const held = verdicts.filter(gates.needsApproval)
  if (held.length === 0) return
  const verdict = { ...held[0]!, approvals: Math.max(...held.map((v) => v.approvals)) }
  const targets = gates.checkExplicit(planned.targets, audit)
  const expiresAt = Date.parse(confirmed.expires_at ?? '')
  // Without the principal and the expiry, the request an approver signed cannot be recomputed: fail closed.
  if (!recorded || Number.isNaN(expiresAt)) throw unverifiedJob(jobId, origin, 'not what its approval binds')
  const command = origin.id.replaceAll(':', ' ')
  if (clock() >= expiresAt) {
    throw new AgentError('E_FORBIDDEN', `the approval of job ${jobId} expired before it ran; nothing was applied`, {
      details: {
        reason: 'approval_expired',
        rule: verdict.rule,
        token_id: confirmed.token_id,
        expired_at: confirmed.expires_at,
        fix: redo(origin, true),
      },
    })
  }
  const subject = text((recorded.subject as { sub?: unknown } | undefined)?.sub)
  const requester = [
    job.gate.requester,
    { account: text(recorded.account), os_user: text(recorded.os_user), subject },
  ].flat()
  const { request, check } = await gates.countApprovals({ ...job.gate, requester }, verdict, {
    binding: { ...job.binding, principal: recorded },
    targets,
    claims: { id: confirmed.token_id, expiresAt },
  })
  if (check.ok) return
  throw new AgentError(
    'E_FORBIDDEN',
    `job ${jobId}: ${command} needs ${verdict.approvals} approval(s) by a person (rule ${verdict.rule}); ${check.approvers.length} valid for this change; nothing was applied`,
    {
      details: {
        reason: check.approvers.length === 0 ? 'approval_required' : 'approvals_short',
        rule: verdict.rule,
        request_id: request.id,
        token_id: confirmed.token_id,
        approvals_required: verdict.approvals,
        approvals_valid: check.approvers.length,
        ...(check.rejected.length > 0 ? { not_counted: check.rejected } : {}),
        fix: redo(origin, true),
      },
    },
  )
}

/** A job record without what the worker must verify: refused, nothing applied. */
function unverifiedJob(jobId: string, origin: JobOrigin, missing = 'no confirmed plan'): AgentError {
  return new AgentError('E_CONFLICT', `job ${jobId} carries ${missing}; nothing was applied`, {
    details: { reason: 'unverified_job', fix: redo(origin) },
  })
}

/** The way to a job that may apply: a new dry-run (and for a held change, a person's approval), then its confirm. */
function redo(origin: JobOrigin, held = false): string {
  const words = `${origin.bin} ${origin.id.replaceAll(':', ' ')}`
  return held
    ? `run ${words} with --dry-run, have a person approve the request it names, then --confirm`
    : `run ${words} with --dry-run, then --confirm`
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null)
