import type { Binding } from '../confirm/token.js'
import { AgentError } from '../errors/agent-error.js'
import { invocation, shellQuote } from '../runtime/invocation.js'
import type { WriteCall, WriteSteps } from './call.js'
import { impactOf } from './impact.js'
import { clock, type Plan } from './plan.js'

/**
 * `--dry-run`: the preview of the plan (its rejected items and the items that already landed beside it) and a
 * confirm token bound to the call, its principal and the targets' versions, valid for `ttlSeconds`.
 */
export async function previewWrite<S>(
  steps: WriteSteps<S>,
  plan: Plan<S>,
  call: WriteCall,
  ttlSeconds: number,
): Promise<unknown> {
  const gate = call.gate ? await import('./gate.js') : undefined
  const verdict = gate && call.gate ? gate.judge(call.gate, plan, call.audit) : undefined
  const held = verdict !== undefined && gate!.needsApproval(verdict)
  if (held) gate!.checkExplicit(plan.targets, call.audit)
  const { current } = await steps.keyRing()
  const { mintToken } = await import('../confirm/token.js')
  const binding: Binding = call.binding
  const { token, claims } = mintToken(current.key, binding, plan.targets ?? [], clock(), ttlSeconds * 1000, current.id)
  call.audit({ token_id: claims.id })
  let approval: ReturnType<NonNullable<typeof gate>['approvalBlock']> | undefined
  if (held) {
    const { approvalRequest } = await import('../approvals/request.js')
    const request = approvalRequest(binding, plan.targets ?? [], claims.id, claims.expiresAt)
    approval = gate!.approvalBlock(call.gate!, verdict, request)
  }
  const rejected = (plan.rejected ?? []).map((r) => ({
    id: r.id,
    error: { code: r.error.code, message: r.error.message },
  }))
  const landed = [...steps.state.landed.values()]
  return {
    preview: {
      changes: plan.changes,
      ...(rejected.length > 0 ? { rejected } : {}),
      ...(landed.length > 0 ? { already_applied: landed } : {}),
      impact: impactOf(steps.risk, plan),
    },
    confirm_token: token,
    expires_at: new Date(claims.expiresAt).toISOString(),
    ...(approval ? { approval } : {}),
  }
}

/**
 * Neither `--dry-run` nor `--confirm`: `E_CONFIRMATION_REQUIRED` with the dry-run command to run first. Decided
 * from the call alone, before any state is read: what the change would be is the dry-run's to say.
 */
export function confirmationRequired(bin: string, id: string, argv: readonly string[]): AgentError {
  const words = [invocation(bin), ...[...id.split(':'), ...argv.filter((a) => a !== '--confirm')].map(shellQuote)]
  return new AgentError(
    'E_CONFIRMATION_REQUIRED',
    `${id.replaceAll(':', ' ')} changes state: run it with --dry-run first, then --confirm <token>`,
    { details: { dry_run_command: `${words.join(' ')} --dry-run` } },
  )
}
