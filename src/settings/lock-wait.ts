import type { ToolConfig } from '../runtime/tool-config.js'
import { type IntegerSetting, integerSetting } from './package-section.js'

/** How long a lock someone else holds is waited for when the tool's author set nothing. */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000

const LOCK_TIMEOUT: IntegerSetting = {
  section: 'locks',
  key: 'timeout_ms',
  fallback: DEFAULT_LOCK_TIMEOUT_MS,
  min: 0,
  max: 600_000,
  unit: 'milliseconds',
}

/**
 * The tool author's `agentcli.locks.timeout_ms`, checked (`0..600000`); unset is {@link DEFAULT_LOCK_TIMEOUT_MS}.
 * Only package.json sets it: a shorter wait answers `E_TIMEOUT` (retryable, before any change) sooner, and never
 * lets a change run without the lock; how long a tool waits is its author's decision, not each caller's.
 */
export function lockTimeoutMsOf(config: Pick<ToolConfig, 'pjson'>): number {
  return integerSetting(config, LOCK_TIMEOUT)
}
