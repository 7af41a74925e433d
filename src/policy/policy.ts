import { canonicalJson } from '../confirm/canonical.js'
import { sha256Hex } from '../confirm/sha256.js'
import { AgentError } from '../errors/agent-error.js'
import { FRAMEWORK_SETTINGS } from '../settings/tool-env.js'
import { BLAST_RADII, RISK_ACTIONS } from '../write/risk.js'

/** What a rule decides: let the call through, ask a person first, or refuse it. */
export const POLICY_DECISIONS = ['allow', 'approve', 'deny'] as const
/** One of {@link POLICY_DECISIONS}. */
export type PolicyDecision = (typeof POLICY_DECISIONS)[number]

/** When a rule applies: every condition given must hold (an absent one holds always). */
export type RuleWhen = {
  /** Command paths (`delete`, `job cancel`). */
  command?: string[]
  kind?: string[]
  action?: string[]
  blast_radius?: string[]
  reversible?: boolean
  /** More targets than this (counted from the call's own arguments and the plan, whichever is larger). */
  targets_over?: number
  /** A plan whose declared size (`Plan.size`) is larger than this. */
  size_over?: number
  /** The principal's profile. */
  profile?: string[]
  /** The principal's account. */
  account?: string[]
}

/** One rule: its id (named in every refusal and audit record), when it applies, and what it decides. */
export type PolicyRule = {
  id: string
  when: RuleWhen
  decision: PolicyDecision
  /** For `approve`: how many distinct approvers must sign (N of the M listed); 1 when absent. */
  approvals?: number
}

/**
 * How an approval may reach a held change: `ssh`, a signature by an approver's key (`approve`); `mcp-elicitation`,
 * a person answering the MCP host's form (`tool mcp`). The server cannot prove that a person, not the model, answered
 * a form: that channel trusts the host, so only the system policy can turn it on (see {@link effectivePolicy}).
 */
export const APPROVAL_CHANNELS = ['ssh', 'mcp-elicitation'] as const
/** One of {@link APPROVAL_CHANNELS}. */
export type ApprovalChannel = (typeof APPROVAL_CHANNELS)[number]
/** The channels that count when the system policy names none: signatures only. */
export const DEFAULT_CHANNELS: readonly ApprovalChannel[] = ['ssh']

/** A person who may approve: an id, an SSH ed25519 public key, and the account they act as (never the requester). */
export type Approver = { id: string; key: string; account?: string }

/**
 * A policy document: the tool's defaults (`"agentcli": {"policy": …}` in its package.json) or the operator's file.
 * `shadow` records what the policy would decide in the audit and never blocks (to roll a policy out).
 */
export type PolicyDocument = {
  mode?: 'enforce' | 'shadow'
  approvers?: Approver[]
  rules?: PolicyRule[]
  /** How approvals may arrive: honoured only in the system policy (in any other source it is checked, then ignored). */
  approval?: { channels?: ApprovalChannel[] }
  /**
   * The one profile this machine runs as (`<BIN>_PROFILE` may only repeat it): allowed only in the system policy,
   * the one source the user cannot edit (see `callerOf`).
   */
  profile?: string
}

/** The policy a call is judged by: the tool's rules then the operator's, and a digest of both. */
export type EffectivePolicy = {
  mode: 'enforce' | 'shadow'
  rules: PolicyRule[]
  approvers: Approver[]
  /** The channels an approval counts from: the system policy's, else {@link DEFAULT_CHANNELS}. */
  channels: readonly ApprovalChannel[]
  /** `pol_` and the SHA-256 of the canonical sources: bound into confirm tokens and approvals. */
  digest: string
  /** The profile the system policy pins, when it pins one: the only profile a call may be judged under. */
  profile?: string
}

const WHEN_LISTS = {
  command: undefined,
  kind: ['read', 'local', 'write'],
  action: Object.keys(RISK_ACTIONS),
  blast_radius: Object.keys(BLAST_RADII),
  profile: undefined,
  account: undefined,
} as const satisfies Record<string, readonly string[] | undefined>

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0

function checkWhen(when: unknown, at: string): string | undefined {
  if (!isObject(when)) return `${at}.when must be an object`
  for (const [key, value] of Object.entries(when)) {
    if (key in WHEN_LISTS) {
      const allowed = WHEN_LISTS[key as keyof typeof WHEN_LISTS] as readonly string[] | undefined
      if (!Array.isArray(value) || value.length === 0 || !value.every((x) => typeof x === 'string'))
        return `${at}.when.${key} must be a non-empty list of strings`
      const bad = allowed ? value.find((x) => !allowed.includes(x)) : undefined
      if (bad !== undefined) return `${at}.when.${key}: ${JSON.stringify(bad)} is not one of ${allowed!.join(', ')}`
    } else if (key === 'reversible') {
      if (typeof value !== 'boolean') return `${at}.when.reversible must be true or false`
    } else if (key === 'targets_over' || key === 'size_over') {
      if (!isCount(value)) return `${at}.when.${key} must be a whole number ≥ 0`
    } else return `${at}.when has an unknown condition ${JSON.stringify(key)}`
  }
  return undefined
}

function checkRule(rule: unknown, at: string): string | undefined {
  if (!isObject(rule)) return `${at} must be an object`
  for (const key of Object.keys(rule))
    if (!['id', 'when', 'decision', 'approvals'].includes(key)) return `${at} has an unknown key ${JSON.stringify(key)}`
  if (typeof rule.id !== 'string' || rule.id === '') return `${at}.id must be a non-empty string`
  if (!(POLICY_DECISIONS as readonly unknown[]).includes(rule.decision))
    return `${at}.decision must be one of ${POLICY_DECISIONS.join(', ')}`
  if (rule.approvals !== undefined && (!isCount(rule.approvals) || rule.approvals < 1 || rule.decision !== 'approve'))
    return `${at}.approvals must be a whole number ≥ 1, on an approve rule`
  return checkWhen(rule.when, at)
}

function checkApprover(a: unknown, at: string): string | undefined {
  if (!isObject(a)) return `${at} must be an object`
  for (const key of Object.keys(a))
    if (!['id', 'key', 'account'].includes(key)) return `${at} has an unknown key ${JSON.stringify(key)}`
  if (typeof a.id !== 'string' || a.id === '') return `${at}.id must be a non-empty string`
  if (typeof a.key !== 'string' || !a.key.startsWith('ssh-ed25519 '))
    return `${at}.key must be an ssh-ed25519 public key`
  if (a.account !== undefined && typeof a.account !== 'string') return `${at}.account must be a string`
  return undefined
}

function checkApproval(approval: unknown): string | undefined {
  if (!isObject(approval)) return 'approval must be an object'
  for (const key of Object.keys(approval))
    if (key !== 'channels') return `approval has an unknown key ${JSON.stringify(key)}`
  const channels = approval.channels
  if (channels === undefined) return undefined
  if (!Array.isArray(channels) || channels.length === 0) return 'approval.channels must be a non-empty list'
  const bad = channels.find((c) => !(APPROVAL_CHANNELS as readonly unknown[]).includes(c))
  if (bad !== undefined)
    return `approval.channels: ${JSON.stringify(bad)} is not one of ${APPROVAL_CHANNELS.join(', ')}`
  if (new Set(channels).size !== channels.length) return 'approval.channels lists a channel twice'
  return undefined
}

function checkProfile(profile: unknown, system: boolean): string | undefined {
  // A pin anywhere else is a label the agent's user could edit away: refused, so nobody trusts one that holds nothing.
  if (!system) return 'profile may be pinned only in the system policy (/etc/<bin>/policy.json)'
  const { pattern, allowed } = FRAMEWORK_SETTINGS.PROFILE
  if (typeof profile !== 'string' || !pattern.test(profile)) return `profile must be ${allowed}`
  return undefined
}

/** The first thing wrong with a policy document, or undefined: every key is known, every value of its type. */
function problem(doc: unknown, system: boolean): string | undefined {
  if (!isObject(doc)) return 'the policy must be a JSON object'
  for (const key of Object.keys(doc))
    if (!['mode', 'approvers', 'rules', 'approval', 'profile'].includes(key))
      return `unknown key ${JSON.stringify(key)}`
  if (doc.profile !== undefined) {
    const p = checkProfile(doc.profile, system)
    if (p) return p
  }
  if (doc.mode !== undefined && doc.mode !== 'enforce' && doc.mode !== 'shadow')
    return 'mode must be "enforce" or "shadow"'
  if (doc.rules !== undefined && !Array.isArray(doc.rules)) return 'rules must be a list'
  if (doc.approvers !== undefined && !Array.isArray(doc.approvers)) return 'approvers must be a list'
  if (doc.approval !== undefined) {
    const p = checkApproval(doc.approval)
    if (p) return p
  }
  for (const [i, rule] of ((doc.rules ?? []) as unknown[]).entries()) {
    const p = checkRule(rule, `rules[${i}]`)
    if (p) return p
  }
  const ids = new Set<string>()
  for (const [i, a] of ((doc.approvers ?? []) as unknown[]).entries()) {
    const p = checkApprover(a, `approvers[${i}]`)
    if (p) return p
    const id = (a as Approver).id
    if (ids.has(id)) return `approvers[${i}].id ${JSON.stringify(id)} is listed twice`
    ids.add(id)
  }
  return undefined
}

/**
 * A policy document, checked: anything unknown or mistyped is `E_CONFIG` naming where, never ignored (a typo in a
 * deny rule must not let everything through). `system` marks the system policy, the only one that may pin `profile`.
 */
export function parsePolicy(doc: unknown, source: string, system = false): PolicyDocument {
  const p = problem(doc, system)
  if (p)
    throw new AgentError('E_CONFIG', `the policy in ${source} is invalid: ${p}`, {
      details: { path: source, reason: 'invalid_policy', fix: `correct ${source} (docs/guide: "Risk and approvals")` },
    })
  return doc as PolicyDocument
}

/**
 * The policy a call is judged by. Every source's rules apply (the strictest decision wins, so a later source
 * tightens and never loosens). Without a system policy, approvers come from the tool's defaults and the operator's
 * file (as before); with one (`/etc/<bin>/policy.json`, which the user cannot change), only from it: a user's file
 * cannot add an approver the agent holds the key of. Shadow mode holds only when every source asks for it, so a
 * user's shadow never turns off the system policy. The approval channels come from the system policy alone: a
 * channel that trusts something the agent may control (the MCP host's form) is the operator's choice as root, never
 * the tool author's default or the user's file; so is the pinned profile. The digest covers every source (the system policy only when
 * there is one, so digests without it are unchanged). Undefined when no source exists.
 */
export function effectivePolicy(
  tool: PolicyDocument | undefined,
  operator: PolicyDocument | undefined,
  system?: PolicyDocument,
): EffectivePolicy | undefined {
  if (!tool && !operator && !system) return undefined
  const sources = [tool, system, operator].filter((d): d is PolicyDocument => d !== undefined)
  const covered = { tool: tool ?? null, operator: operator ?? null, ...(system ? { system } : {}) }
  const digest = sha256Hex(`agentcli-policy\0${canonicalJson(covered)}`)
  return {
    mode: sources.every((d) => d.mode === 'shadow') ? 'shadow' : 'enforce',
    rules: sources.flatMap((d) => d.rules ?? []),
    approvers: system ? (system.approvers ?? []) : sources.flatMap((d) => d.approvers ?? []),
    channels: system?.approval?.channels ?? DEFAULT_CHANNELS,
    digest: `pol_${digest.slice(0, 32)}`,
    // Only when pinned, so an effective policy without a pin is what it always was.
    ...(system?.profile === undefined ? {} : { profile: system.profile }),
  }
}
