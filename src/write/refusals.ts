import type { Target } from '../confirm/targets.js'
import type { RejectReason } from '../confirm/token.js'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import type { WriteCall } from './call.js'

/*
 * How a write says no after a token was presented: a refused token, or targets that moved since the dry-run.
 * Every refusal is audited `refused`; none tells a caller more than the token already named.
 */

/** A refused token (`E_CONFLICT` with the reason, and the token's id once it is known); audited `refused`. */
export function refuse(audit: WriteCall['audit'], reason: RejectReason, tokenId?: string): AgentError {
  audit({ mode: 'refused' })
  return new AgentError('E_CONFLICT', `confirm token refused: ${reason.replaceAll('_', ' ')}`, {
    details: {
      reason,
      ...(tokenId ? { token_id: tokenId } : {}),
      fix: 'run the command again with --dry-run for a new token',
    },
  })
}

/** Targets that moved since the dry-run: `E_CONFLICT` naming each with its version then and now. */
export function driftError(
  reason: 'target_changed' | 'state_drift',
  drift: ReadonlyArray<{ id: string }>,
  tokenId: string,
  note = 'nothing was changed',
  cause?: unknown,
): AgentError {
  // Each target with the version it had at the dry-run and has now, so the caller sees what moved.
  const named = drift.length > 0 ? `: ${drift.map(driftText).join(', ')}` : ''
  return new AgentError('E_CONFLICT', `the targets moved since the dry-run${named}; ${note}`, {
    details: { reason, token_id: tokenId, drift, fix: 'run the command again with --dry-run for a new token' },
    cause,
  })
}

/** A target the plan can no longer find, after a valid token, is drift (exit 6), not "not found" (exit 3). */
export async function goneOrRethrow(
  error: unknown,
  then: readonly Target[] | undefined,
  tokenId: string,
): Promise<unknown> {
  if (!isAgentError(error) || error.code !== 'E_NOT_FOUND') return error
  const { goneDrift } = await import('../confirm/targets.js')
  return driftError('state_drift', goneDrift(then, error.details.id), tokenId, undefined, error)
}

function driftText(d: { id: string; version_then?: unknown; version_now?: unknown; gone?: boolean }): string {
  const short = (v: unknown) => {
    const text = String(v)
    return text.length > 16 ? `${text.slice(0, 12)}…` : text
  }
  if (!('version_then' in d)) return d.id
  return `${d.id} (version ${short(d.version_then)} then, ${d.gone ? 'gone' : `${short(d.version_now)}`} now)`
}
