import type { ApprovalCheck, Requester } from '../approvals/check.js'
import type { PreparedRequest } from '../approvals/request.js'
import type { ApprovalStore } from '../approvals/store.js'
import type { AuditFacts } from '../audit/record.js'
import type { KeyRing } from '../confirm/secret.js'
import type { Target } from '../confirm/targets.js'
import type { Binding, TokenClaims } from '../confirm/token.js'
import { AgentError } from '../errors/agent-error.js'
import { evaluate, type PolicyFacts, type Verdict } from '../policy/evaluate.js'
import type { EffectivePolicy } from '../policy/policy.js'
import type { Plan } from './plan.js'

/** Where a step notes what the audit record learns (the flow's `WriteCall.audit`). */
type Audit = (facts: AuditFacts) => void

/**
 * The policy gate of one write call (src/policy/ decides; this applies the verdict to the flow): judged before
 * the command's own code runs, again on the plan at the dry-run, and again at `--confirm`. A deny is
 * `E_FORBIDDEN`; an approval the policy asks for is checked at `--confirm` before anything is consumed or applied.
 */
export type GateCall = {
  policy: EffectivePolicy
  /** Who, what and how much, before the plan: `targets` counts the call's own items. */
  facts: Omit<PolicyFacts, 'size'>
  /** The shell words of the tool (`tasks`), for the commands an approval names. */
  bin: string
  /** The store approvals are filed in and read from. */
  approvals: () => Promise<ApprovalStore>
  /**
   * The principal's account and OS user: an approver who is either is the requester. A job's worker names two: the
   * confirm's principal and its own.
   */
  requester: Requester | readonly Requester[]
  /** This very call, as a shell command: what to run again once approved. */
  resume: string
  /** The confirm key ring, which verifies elicitation approvals (read only when the system policy turns them on). */
  keyRing?: () => Promise<KeyRing>
}

/** The facts after a plan: the larger of the call's own count and the plan's targets, and the plan's size. */
function factsOf(gate: GateCall, plan: Plan<unknown> | undefined): PolicyFacts {
  const targets = Math.max(gate.facts.targets, plan?.targets?.length ?? 0)
  return { ...gate.facts, targets, size: plan?.size }
}

/**
 * The profile is pinned in one place (`callerOf`); a tool's own `principal()` that names another profile would
 * have the gate judge a label the system policy overrules, so it is refused (`E_CONFIG`), never judged.
 */
function checkPinned(gate: GateCall, audit: Audit): void {
  const pinned = gate.policy.profile
  if (pinned === undefined || gate.facts.profile === pinned) return
  audit({ mode: 'refused' })
  throw new AgentError('E_CONFIG', `the principal's profile is not ${pinned}, the profile the system policy pins`, {
    details: {
      reason: 'profile_pinned',
      pinned,
      got: gate.facts.profile,
      fix: "the tool's principal() must keep the profile of the default principal",
    },
  })
}

/**
 * Judge the call (before its plan when `plan` is undefined). The verdict is recorded in the audit; a deny is
 * `E_FORBIDDEN` (`reason: policy_denied`, the rule) unless the policy is in shadow mode, which never blocks.
 */
export function judge(gate: GateCall, plan: Plan<unknown> | undefined, audit: Audit): Verdict {
  checkPinned(gate, audit)
  const verdict = evaluate(gate.policy, factsOf(gate, plan))
  audit({
    policy: { decision: verdict.decision, rule: verdict.rule, digest: gate.policy.digest, shadow: verdict.shadow },
  })
  if (verdict.shadow || verdict.decision !== 'deny') return verdict
  audit({ mode: 'refused' })
  throw new AgentError('E_FORBIDDEN', `the policy forbids this call (rule ${verdict.rule})`, {
    details: {
      reason: 'policy_denied',
      rule: verdict.rule,
      policy: gate.policy.digest,
      fix: 'this change is not allowed here; ask the operator of this tool',
    },
  })
}

/** Whether the verdict holds the call until enough people approve it. */
export function needsApproval(verdict: Verdict): boolean {
  return verdict.decision === 'approve' && !verdict.shadow
}

/**
 * A change that needs approval must name what it touches: one with no targets, or a target that is a pattern, is
 * `E_FORBIDDEN` (`reason: implicit_targets`): nobody can approve what a wildcard will reach. Returns the targets.
 */
export function checkExplicit(targets: readonly Target[] | undefined, audit: Audit): readonly Target[] {
  if (targets && targets.length > 0 && !targets.some((t) => /[*?]/.test(t.id))) return targets
  audit({ mode: 'refused' })
  throw new AgentError('E_FORBIDDEN', 'a change that needs approval must name its targets one by one', {
    details: { reason: 'implicit_targets', fix: 'name each target explicitly, then run --dry-run again' },
  })
}

/** What the dry-run says of an approval the policy asks for. */
export function approvalBlock(gate: GateCall, verdict: Verdict, request: { id: string; encoded: string }) {
  return {
    request_id: request.id,
    // An approve verdict always comes from a rule.
    rule: String(verdict.rule),
    required: verdict.approvals,
    request: request.encoded,
    approve_command: `${gate.bin} approve ${request.encoded} --key <path to your ssh ed25519 key>`,
  }
}

/** A change as its approval request binds it: the token's binding, the plan's targets, the token's id and expiry. */
export type HeldChange = {
  binding: Binding
  targets: readonly Target[]
  claims: Pick<TokenClaims, 'id' | 'expiresAt'>
}

/**
 * The approval request of a held change, recomputed from it, and the verdict on the approvals filed for it: each
 * verified against the policy's approvers and channels (`--confirm` and an async write's worker count alike).
 */
export async function countApprovals(
  gate: GateCall,
  verdict: Verdict,
  change: HeldChange,
): Promise<{ request: PreparedRequest; check: ApprovalCheck }> {
  const { approvalRequest } = await import('../approvals/request.js')
  const { checkApprovals } = await import('../approvals/check.js')
  const request = approvalRequest(change.binding, change.targets, change.claims.id, change.claims.expiresAt)
  const filed = await (await gate.approvals()).list(request.id)
  const channels = gate.policy.channels
  const keys = channels.includes('mcp-elicitation') ? (await gate.keyRing?.())?.keys : undefined
  const check = checkApprovals(request, filed, gate.policy.approvers, gate.requester, verdict.approvals, {
    channels,
    ...(keys ? { keys } : {}),
    now: Date.now(),
  })
  return { request, check }
}

/**
 * At `--confirm`, for a call the policy holds: the approvals filed for exactly this change (recomputed here from
 * the verified token and the plan), each verified. Too few is `E_HUMAN_REQUIRED` (exit 9) with what to relay: the
 * change, the request, how to approve, and the command to run once approved. Returns who approved.
 */
export async function requireApprovals(
  gate: GateCall,
  verdict: Verdict,
  change: HeldChange,
  audit: Audit,
): Promise<string[]> {
  const { request, check } = await countApprovals(gate, verdict, change)
  if (check.ok) {
    audit({ approved_by: check.approvers, approval_request: request.id })
    return check.approvers
  }
  audit({ mode: 'refused', approval_request: request.id })
  const block = approvalBlock(gate, verdict, request)
  throw new AgentError(
    'E_HUMAN_REQUIRED',
    `${change.binding.command.replaceAll(':', ' ')} needs ${verdict.approvals} approval(s) by a person (rule ${verdict.rule}); ${check.approvers.length} valid so far`,
    {
      details: {
        action: 'approve',
        reason: check.approvers.length === 0 ? 'approval_required' : 'approvals_short',
        rule: verdict.rule,
        request_id: request.id,
        request: request.encoded,
        summary: {
          command: change.binding.command.replaceAll(':', ' '),
          target_count: request.request.target_count,
          targets: request.request.targets.map(([id]) => id),
          expires_at: request.request.expires_at,
        },
        approvals_required: verdict.approvals,
        approvals_valid: check.approvers.length,
        ...(check.rejected.length > 0 ? { not_counted: check.rejected } : {}),
        approve_command: block.approve_command,
        sign_command: `printf %s '${request.encoded.slice(4)}' | basenc --base64url -d | ssh-keygen -Y sign -f <key> -n agentcli-approval > approval.sig; ${gate.bin} approve ${request.encoded} --signature approval.sig`,
        resume: gate.resume,
      },
    },
  )
}
