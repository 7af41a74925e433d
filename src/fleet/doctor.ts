import { isAgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { toolEnv } from '../settings/tool-env.js'
import { openBackend } from './backend.js'
import { redactUrl, stateLocation } from './location.js'
import { SCHEMA_VERSION } from './types.js'

/** One `doctor` line: `fix` is null exactly when the check passes. */
export type StateCheck = { check: 'state_store'; status: 'pass' | 'warn' | 'fail'; message: string; fix: string | null }

/**
 * `doctor`'s report on the state store: which backend, whether it answers, its schema version (created on first
 * use, as this check does), and whether the machines can share confirm tokens at all (an injected secret).
 */
export async function stateCheck(config: ToolConfig): Promise<StateCheck> {
  const env = toolEnv(config.bin)
  let location: ReturnType<typeof stateLocation>
  try {
    location = stateLocation(config)
  } catch (error) {
    const fix = isAgentError(error) ? String(error.details.fix ?? 'see message') : 'see message'
    return { check: 'state_store', status: 'fail', message: (error as Error).message, fix }
  }
  if (location.kind === 'file')
    return {
      check: 'state_store',
      status: 'pass',
      message: `machine-local files under ${config.dataDir} (single use and idempotency hold on this machine)`,
      fix: null,
    }
  const where = redactUrl(location.url)
  try {
    const backend = (await openBackend(config))!
    const health = await backend.health()
    const shared = env.raw('CONFIRM_SECRET') || env.raw('CONFIRM_SECRET_FILE')
    const message = `${location.kind} ${backend.store.where} reachable, schema version ${health.schema_version} (this tool: ${SCHEMA_VERSION}), jobs on ${health.queue}`
    if (!shared)
      return {
        check: 'state_store',
        status: 'warn',
        message: `${message}; but no shared confirm secret: a token minted on one machine fails on another`,
        fix: `inject one secret into every machine: ${env.name('CONFIRM_SECRET')} or ${env.name('CONFIRM_SECRET_FILE')} (docs/fleet.md)`,
      }
    return { check: 'state_store', status: 'pass', message, fix: null }
  } catch (error) {
    const fix = isAgentError(error) ? String(error.details.fix ?? 'see message') : `check ${where}`
    return { check: 'state_store', status: 'fail', message: (error as Error).message, fix }
  }
}
