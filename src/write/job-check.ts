import { AgentError } from '../errors/agent-error.js'
import type { JobRecord } from '../jobs/types.js'
import type { Plan } from './plan.js'
import { driftError, goneOrRethrow } from './refusals.js'

/**
 * In the worker of an async write: recompute the plan and hand it on only if its targets and versions are exactly
 * those that were confirmed (a file swapped after the confirm is `E_CONFLICT`, nothing applied), under the policy
 * the confirm was judged by (`origin.policy`, the digest now; another is `E_CONFLICT` `policy_changed`).
 */
export async function confirmedPlan<S>(
  record: JobRecord,
  plan: () => Promise<Plan<S>>,
  origin: { bin: string; id: string; policy?: string | undefined },
): Promise<Plan<S>> {
  const confirmed = record.plan
  if (!confirmed || !Array.isArray(confirmed.targets)) {
    throw new AgentError('E_CONFLICT', `job ${record.job_id} carries no confirmed plan; nothing was applied`, {
      details: {
        reason: 'unverified_job',
        fix: `run ${origin.bin} ${origin.id.replaceAll(':', ' ')} with --dry-run, then --confirm`,
      },
    })
  }
  // The same policy, arguments and targets give the same verdict: a policy changed since the confirm stops the job.
  if (confirmed.policy !== origin.policy) {
    throw new AgentError(
      'E_CONFLICT',
      `the policy changed since job ${record.job_id} was confirmed; nothing was applied`,
      {
        details: {
          reason: 'policy_changed',
          token_id: confirmed.token_id,
          fix: `run ${origin.bin} ${origin.id.replaceAll(':', ' ')} with --dry-run, then --confirm`,
        },
      },
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
  return planned
}
