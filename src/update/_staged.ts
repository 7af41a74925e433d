import type { AgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import type { UpdateStage } from './errors.js'

/** Decorate a failure with where it happened and what state the install is in (spec 002 §14). */
export function staged(error: unknown, stage: UpdateStage, from: string, replaced: boolean, skill: string): AgentError {
  const agent = toAgentError(error)
  agent.details.stage ??= stage
  agent.details.current_version = from
  agent.details.binary_replaced = replaced
  agent.details.skill_sync_status = skill
  return agent
}
