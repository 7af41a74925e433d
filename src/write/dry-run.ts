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
  // A held change names its targets before a token exists for it: they are what its approval request binds.
  const named = held ? gate!.checkExplicit(plan.targets, call.audit) : undefined
  const { current } = await steps.keyRing()
  const { mintToken } = await import('../confirm/token.js')
  const binding: Binding = call.binding
  const { token, claims } = mintToken(current.key, binding, plan.targets ?? [], clock(), ttlSeconds * 1000, current.id)
  call.audit({ token_id: claims.id })
  let approval: ReturnType<NonNullable<typeof gate>['approvalBlock']> | undefined
  if (named) {
    const { approvalRequest } = await import('../approvals/request.js')
    const request = approvalRequest(binding, named, claims.id, claims.expiresAt)
    approval = gate!.approvalBlock(call.gate!, verdict!, request)
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
 * The dry-run of this call: the same invocation, runnable as this process was started, without `--confirm` and
 * its token, with `--dry-run`. The one builder of every `dry_run_command` and batch `resume`.
 */
export function dryRunCommand(bin: string, id: string, argv: readonly string[]): string {
  const end = argv.indexOf('--')
  const flags = end === -1 ? argv : argv.slice(0, end)
  const kept: string[] = []
  for (let i = 0; i < flags.length; i++) {
    const a = flags[i]!
    if (a === '--confirm') i++
    else if (!a.startsWith('--confirm=') && a !== '--dry-run') kept.push(a)
  }
  // After `--` every word is an argument (even one spelled `--dry-run`): kept as is, the flag goes before it.
  const rest = end === -1 ? [] : argv.slice(end)
  return [invocation(bin), ...[...id.split(':'), ...kept, '--dry-run', ...rest].map(shellQuote)].join(' ')
}

/**
 * Neither `--dry-run` nor `--confirm`: `E_CONFIRMATION_REQUIRED` with the dry-run command to run first. Decided
 * from the call alone, before any state is read: what the change would be is the dry-run's to say.
 */
export function confirmationRequired(bin: string, id: string, argv: readonly string[]): AgentError {
  return new AgentError(
    'E_CONFIRMATION_REQUIRED',
    `${id.replaceAll(':', ' ')} changes state: run it with --dry-run first, then --confirm <token>`,
    { details: { dry_run_command: dryRunCommand(bin, id, argv) } },
  )
}
