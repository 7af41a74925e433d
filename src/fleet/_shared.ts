import { AgentError } from '../errors/agent-error.js'
import type { StoreName } from './errors.js'
import { SCHEMA_VERSION } from './types.js'

/** The `E_NOT_FOUND` of an unknown job id, as the file store words it. */
export function jobNotFound(id: string): AgentError {
  return new AgentError('E_NOT_FOUND', `job ${id} not found`, {
    details: { job_id: id },
    hint: 'list jobs with `job list`',
  })
}

/** A store written by a newer agentcli: refuse rather than misread it. */
export function newerSchema(store: StoreName, version: number): AgentError {
  return new AgentError(
    'E_CONFIG',
    `the ${store.backend} state store ${store.where} has schema version ${version}; this tool knows ${SCHEMA_VERSION}`,
    {
      details: {
        reason: 'state_schema_newer',
        schema_version: version,
        supported: SCHEMA_VERSION,
        fix: 'upgrade this tool to the version the rest of the fleet runs',
      },
    },
  )
}
