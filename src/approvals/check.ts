import type { Approver } from '../policy/policy.js'
import { APPROVAL_NAMESPACE, type PreparedRequest } from './request.js'
import { parseSignature, publicKeyBlob, verifySignature } from './sshsig.js'

/** Why one filed signature does not count. */
export type NotCounted = 'not_a_signature' | 'unknown_key' | 'bad_signature' | 'self_approval' | 'duplicate_approver'

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
 * is not the requester (by account or OS user), and that approver has not already been counted. `ok` when at
 * least `needed` distinct approvers count.
 */
export function checkApprovals(
  request: PreparedRequest,
  signatures: readonly string[],
  approvers: readonly Approver[],
  requester: { account: string | null; os_user: string | null },
  needed: number,
): ApprovalCheck {
  const counted: string[] = []
  const rejected: ApprovalCheck['rejected'] = []
  for (const [index, armored] of signatures.entries()) {
    const sig = parseSignature(armored)
    if (!sig) {
      rejected.push({ index, reason: 'not_a_signature' })
      continue
    }
    const approver = approvers.find((a) => publicKeyBlob(a.key)?.equals(sig.publicKey))
    if (!approver) rejected.push({ index, reason: 'unknown_key' })
    else if (!verifySignature(armored, request.bytes, APPROVAL_NAMESPACE, sig.publicKey))
      rejected.push({ index, reason: 'bad_signature' })
    else if (isRequester(approver, requester)) rejected.push({ index, reason: 'self_approval' })
    else if (counted.includes(approver.id)) rejected.push({ index, reason: 'duplicate_approver' })
    else counted.push(approver.id)
  }
  return { ok: counted.length >= needed, approvers: counted, rejected }
}

/** An approver is the requester when the account they act as is the requester's account or OS user. */
function isRequester(approver: Approver, requester: { account: string | null; os_user: string | null }): boolean {
  const as = approver.account ?? approver.id
  return as === requester.account || as === requester.os_user
}
