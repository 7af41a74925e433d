import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'

/** Deadlines of the steps of an update, in milliseconds; every child process and download has one. */
export type UpdateTimeouts = {
  /** One download (checksums, bundle, the tarball), whole body included. */
  download_ms: number
  /** `npm install -g <package>@<version>`. */
  npm_install_ms: number
  /** `npm prefix -g`, asked only when the tool runs from a node_modules directory. */
  npm_prefix_ms: number
  /** The staged version's `--version`, run before the switch. */
  smoke_ms: number
  /** Waiting for another update (or rollback) of the same install to finish. */
  lock_wait_ms: number
}

/** The defaults: generous for slow links, short enough that nothing hangs for ever. */
export const DEFAULT_UPDATE_TIMEOUTS: UpdateTimeouts = {
  download_ms: 300_000,
  npm_install_ms: 600_000,
  npm_prefix_ms: 5_000,
  smoke_ms: 20_000,
  lock_wait_ms: 120_000,
}

/**
 * The tool's update deadlines: `"agentcli": {"update": {"timeouts": {"download_ms": …}}}` in package.json
 * (declared by the author, so no environment can stretch or shrink them). A value that is not a positive
 * integer is `E_CONFIG` with `allowed`/`got`.
 */
export function updateTimeouts(config: ToolConfig): UpdateTimeouts {
  const update = readToolSettings(config).update as { timeouts?: Record<string, unknown> } | undefined
  const declared = update?.timeouts ?? {}
  const out = { ...DEFAULT_UPDATE_TIMEOUTS }
  for (const [key, value] of Object.entries(declared)) {
    if (!(key in out))
      throw new AgentError('E_CONFIG', `unknown update timeout "${key}" in package.json`, {
        details: { setting: `agentcli.update.timeouts.${key}`, allowed: Object.keys(out), got: key },
      })
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 86_400_000)
      throw new AgentError('E_CONFIG', `agentcli.update.timeouts.${key} must be a whole number of milliseconds`, {
        details: { setting: `agentcli.update.timeouts.${key}`, allowed: '1..86400000', got: value },
      })
    out[key as keyof UpdateTimeouts] = value
  }
  return out
}
