import { createHash } from 'node:crypto'
import { canonicalJson } from '../confirm/canonical.js'
import { sortTargets, type Target } from '../confirm/targets.js'
import type { Binding } from '../confirm/token.js'

/** How many targets a request names in clear; all of them are bound by their digest. */
export const REQUEST_TARGETS = 100
/** Arguments longer than this (as canonical JSON) travel by digest only, so a request stays one short word. */
export const REQUEST_ARGS_CHARS = 2048

/** The namespace of every approval signature (`ssh-keygen -Y sign -n agentcli-approval`). */
export const APPROVAL_NAMESPACE = 'agentcli-approval'

const PREFIX = 'ar1.'

/**
 * Exactly what a person approves: the tool, command, arguments and principal of the call, its targets and their
 * versions, the policy it was judged by, the confirm token it goes with, and when it expires. An approval is a
 * signature over these canonical bytes, so it is good for this change only, once (the token is single-use).
 */
export type ApprovalRequest = {
  v: 1
  tool: string
  command: string
  /** The arguments in clear, or null when they are longer than {@link REQUEST_ARGS_CHARS}. */
  args: Record<string, unknown> | null
  /** The SHA-256 of the canonical arguments: what binds them, in clear or not. */
  args_digest: string
  principal: Record<string, unknown>
  /** The SHA-256 of every target and version, sorted. */
  targets_digest: string
  target_count: number
  /** The first {@link REQUEST_TARGETS} targets, for the person to read. */
  targets: Array<[string, string | number | null]>
  policy: string
  token_id: string
  expires_at: string
}

/** A request with its id and the forms it travels in. */
export type PreparedRequest = {
  request: ApprovalRequest
  /** The exact bytes an approver signs. */
  bytes: Buffer
  /** `ar_` and the first 24 hex digits of the SHA-256 of those bytes. */
  id: string
  /** The request as one word to hand an approver (`ar1.` and the bytes in base64url). */
  encoded: string
}

/** The request of a change: the token's binding and id, the plan's targets, the token's expiry. */
export function approvalRequest(
  binding: Binding,
  targets: readonly Target[],
  tokenId: string,
  expiresAt: number,
): PreparedRequest {
  const pairs = sortTargets(targets).map((t): [string, string | number | null] => [t.id, t.version])
  const args = canonicalJson(binding.args)
  return prepare({
    v: 1,
    tool: binding.tool,
    command: binding.command,
    args: args.length <= REQUEST_ARGS_CHARS ? binding.args : null,
    args_digest: createHash('sha256').update(args).digest('hex'),
    principal: binding.principal,
    targets_digest: createHash('sha256').update(canonicalJson(pairs)).digest('hex'),
    target_count: pairs.length,
    targets: pairs.slice(0, REQUEST_TARGETS),
    policy: binding.policy ?? '',
    token_id: tokenId,
    expires_at: new Date(expiresAt).toISOString(),
  })
}

function prepare(request: ApprovalRequest): PreparedRequest {
  const bytes = Buffer.from(canonicalJson(request))
  const id = `ar_${createHash('sha256').update(bytes).digest('hex').slice(0, 24)}`
  return { request, bytes, id, encoded: PREFIX + bytes.toString('base64url') }
}

/**
 * A request an approver was handed, decoded: undefined when it is not one (the approver's tool shows what it
 * decodes; what it signs is judged at the requester's `--confirm`, against the change recomputed there).
 */
export function decodeRequest(encoded: string): PreparedRequest | undefined {
  if (!encoded.startsWith(PREFIX)) return undefined
  try {
    const r = JSON.parse(Buffer.from(encoded.slice(PREFIX.length), 'base64url').toString('utf8')) as ApprovalRequest
    if (typeof r !== 'object' || r === null || r.v !== 1 || typeof r.command !== 'string') return undefined
    if (typeof r.token_id !== 'string' || typeof r.expires_at !== 'string' || !Array.isArray(r.targets))
      return undefined
    return prepare(r)
  } catch {
    return undefined
  }
}
