import { AgentError } from '../errors/agent-error.js'

/** Why a release was refused (every one is `E_INTEGRITY`, exit 1, not retryable, nothing replaced). */
export type IntegrityReason =
  | 'signature_missing'
  | 'signature_invalid'
  | 'identity_mismatch'
  | 'issuer_mismatch'
  | 'root_untrusted'
  | 'checksum_missing'
  | 'checksum_mismatch'
  | 'bundle_invalid'
  | 'release_broken'
  | 'too_large'

/** Where in the update an error happened. */
export type UpdateStage =
  | 'discover'
  | 'lock'
  | 'download'
  | 'verify_signature'
  | 'verify_checksum'
  | 'extract'
  | 'smoke_test'
  | 'switch'
  | 'skill_sync'
  | 'cleanup'

/** An integrity failure: fail closed. */
export function integrityError(
  reason: IntegrityReason,
  message: string,
  details: Record<string, unknown> = {},
): AgentError {
  return new AgentError('E_INTEGRITY', message, { details: { reason, ...details } })
}
