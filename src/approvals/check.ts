import type { ApprovalChannel, Approver } from '../policy/policy.js'
import { type ElicitationReject, isElicitation, verifyElicitation } from './elicitation.js'
import { APPROVAL_NAMESPACE, type PreparedRequest } from './request.js'
import { parseSignature, publicKeyBlob, verifySignature } from './sshsig.js'

/** Why one filed signature does not count. */
export type NotCounted =
  | 'not_a_signature'
  | 'unknown_key'
  | 'bad_signature'
  | 'self_approval'
  | 'duplicate_approver'
  | 'channel_disabled'
  | ElicitationReject

/**
 * The channels an approval counts from, and what verifies an elicitation approval: the confirm keys and the
 * clock. Without it, signatures only.
 */
export type Channels = {
  channels: readonly ApprovalChannel[]
  /** The confirm key ring's keys (needed only when `mcp-elicitation` is on). */
  keys?: ReadonlyMap<string | null, Buffer>
  now: number
}

/**
 * Who asked for a change: an approver acting as this account or OS user is the requester, and so is one acting as
 * the authenticated subject (`sub`) a `tool mcp --http` call was made for (over HTTP the OS user and the account are
 * the server's, the same for every caller).
 */
export type Requester = { account: string | null; os_user: string | null; subject?: string | null }

/** The verdict on a request's signatures: who approved, and why each other signature does not count. */
export type ApprovalCheck = {
  ok: boolean
  /** The ids of the distinct approvers whose signature verified. */
  approvers: string[]
  rejected: Array<{ index: number; reason: NotCounted }>
}

/**
 * Count the approvals of a request: a signature counts when it parses as an ed25519 SSHSIG in the approval
 * namespace, its key is an approver's of the policy, it verifies over the exact bytes of the request, the approver
 * is none of the requesters (by account, OS user or remote subject), and that approver has not already been counted. An
 * elicitation approval (a person's yes at the MCP host, when the system policy turns that channel on) counts when
 * it verifies for this request and has not expired; however many were filed, they count as one approver at most
 * (the server cannot tell one person at a host from another). A filed approval of a channel that is off does not
 * count. `ok` when at least `needed` distinct approvers count.
 */
export function checkApprovals(
  request: PreparedRequest,
  signatures: readonly string[],
  approvers: readonly Approver[],
  requester: Requester | readonly Requester[],
  needed: number,
  channels: Channels = { channels: ['ssh'], now: Date.now() },
): ApprovalCheck {
  const requesters = [requester].flat()
  const counted: string[] = []
  const rejected: ApprovalCheck['rejected'] = []
  let elicited = false
  for (const [index, armored] of signatures.entries()) {
    if (isElicitation(armored)) {
      const verdict = channels.channels.includes('mcp-elicitation')
        ? verifyElicitation(armored, request, channels.keys ?? new Map(), channels.now)
        : { reason: 'channel_disabled' as const }
      if ('reason' in verdict) rejected.push({ index, reason: verdict.reason })
      else if (elicited) rejected.push({ index, reason: 'duplicate_approver' })
      else {
        elicited = true
        counted.push(verdict.approver)
      }
      continue
    }
    if (!channels.channels.includes('ssh')) {
      rejected.push({ index, reason: 'channel_disabled' })
      continue
    }
    const sig = parseSignature(armored)
    if (!sig) {
      rejected.push({ index, reason: 'not_a_signature' })
      continue
    }
    const approver = approvers.find((a) => publicKeyBlob(a.key)?.equals(sig.publicKey))
    if (!approver) rejected.push({ index, reason: 'unknown_key' })
    else if (!verifySignature(armored, request.bytes, APPROVAL_NAMESPACE, sig.publicKey))
      rejected.push({ index, reason: 'bad_signature' })
    else if (requesters.some((r) => isRequester(approver, r))) rejected.push({ index, reason: 'self_approval' })
    else if (counted.includes(approver.id)) rejected.push({ index, reason: 'duplicate_approver' })
    else counted.push(approver.id)
  }
  return { ok: counted.length >= needed, approvers: counted, rejected }
}

/** An approver is the requester when the account they act as is the requester's account, OS user or subject. */
function isRequester(approver: Approver, requester: Requester): boolean {
  const as = approver.account ?? approver.id
  return as === requester.account || as === requester.os_user || as === requester.subject
}
