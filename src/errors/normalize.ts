import { AgentError, isAgentError } from './agent-error.js'

/**
 * Turn anything thrown into an {@link AgentError}, once, at the edge. A foreign error keeps its message only
 * for people; its stack stays on stderr behind DEBUG.
 */
export function toAgentError(error: unknown): AgentError {
  if (isAgentError(error)) return error
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code
    if (error.name === 'AbortError' || code === 'ABORT_ERR')
      return new AgentError('E_INTERRUPTED', 'interrupted', { cause: error })
    return new AgentError('E_INTERNAL', error.message || error.name, { cause: error })
  }
  return new AgentError('E_INTERNAL', `non-error thrown: ${String(error)}`, { cause: error })
}
