import type { Risk } from '../write/risk.js'
import type { EffectivePolicy, PolicyDecision, PolicyRule, RuleWhen } from './policy.js'

/**
 * What the gate knows of a call. `targets` is counted by the framework (the call's own items and the plan's
 * targets, whichever is larger), never taken from a number the tool reports; `size` is the plan's, and unknown
 * (rules on it do not apply) before the plan is computed.
 */
export type PolicyFacts = {
  command: string
  kind: string
  risk: Risk
  targets: number
  size: number | undefined
  profile: string | null
  account: string | null
}

/** The gate's verdict on one call: the decision, the rule that made it, how many approvals it takes. */
export type Verdict = {
  decision: PolicyDecision
  /** The id of the deciding rule; null when no rule applied (allowed by default). */
  rule: string | null
  /** For `approve`: the distinct approvers needed. */
  approvals: number
  /** The policy is in shadow mode: the verdict is recorded, never enforced. */
  shadow: boolean
}

const RANK: Record<PolicyDecision, number> = { allow: 0, approve: 1, deny: 2 }

const inList = (list: string[] | undefined, value: string | null) =>
  list === undefined || (value !== null && list.includes(value))

/** Whether every condition of `when` holds for the facts; a size condition never holds while the size is unknown. */
export function matches(when: RuleWhen, f: PolicyFacts): boolean {
  return (
    inList(when.command, f.command) &&
    inList(when.kind, f.kind) &&
    inList(when.action, f.risk.action) &&
    inList(when.blast_radius, f.risk.blast_radius) &&
    (when.reversible === undefined || when.reversible === f.risk.reversible) &&
    (when.targets_over === undefined || f.targets > when.targets_over) &&
    (when.size_over === undefined || (f.size !== undefined && f.size > when.size_over)) &&
    inList(when.profile, f.profile) &&
    inList(when.account, f.account)
  )
}

/**
 * Judge a call: of the rules that apply, the strictest decision wins (deny over approve over allow), named by the
 * first rule that makes it; approvals are the most any applying approve rule asks. Deterministic: the same policy
 * and facts give the same verdict, whatever the rules' order among equals.
 */
export function evaluate(policy: EffectivePolicy, facts: PolicyFacts): Verdict {
  let winner: PolicyRule | undefined
  let approvals = 0
  for (const rule of policy.rules) {
    if (!matches(rule.when, facts)) continue
    if (rule.decision === 'approve') approvals = Math.max(approvals, rule.approvals ?? 1)
    if (!winner || RANK[rule.decision] > RANK[winner.decision]) winner = rule
  }
  const decision = winner?.decision ?? 'allow'
  return {
    decision,
    rule: winner?.id ?? null,
    approvals: decision === 'approve' ? approvals : 0,
    shadow: policy.mode === 'shadow',
  }
}
