import { AgentError, isAgentError } from './agent-error.js'
import { beforeChange } from './before-change.js'

/** What {@link stopIfInterrupted} reads of a signal: an `AbortSignal` has both. */
export type Interruption = { readonly aborted: boolean; readonly reason?: unknown }

/**
 * Throw the run's interruption (`E_INTERRUPTED`, the signal's reason) if `signal` aborted. Call it only where
 * nothing has changed yet (a lock wait, a batch loop before the tool's write, the write flow before its commit
 * points): the error is marked as preceding any change, so the write flow gives the confirm token back.
 */
export function stopIfInterrupted(signal: Interruption | undefined): void {
  if (!signal?.aborted) return
  const reason: unknown = signal.reason
  throw beforeChange(isAgentError(reason) ? reason : new AgentError('E_INTERRUPTED', 'interrupted', { cause: reason }))
}
