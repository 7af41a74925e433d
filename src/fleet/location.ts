import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { integerSetting, readToolSettings } from '../settings/package-section.js'
import { toolEnv } from '../settings/tool-env.js'

/** Where a tool keeps the state that makes writes safe: files under the user's home, or a shared engine. */
export type StateLocation =
  | { kind: 'file' }
  | {
      kind: 'postgres' | 'redis'
      url: string
      /** Where the URL came from (`$TASKS_STATE_URL` or `package.json agentcli.state.url`), for messages. */
      source: string
    }

/** `"agentcli": {"state": …}` in a tool's package.json. */
export type StateSettings = {
  /** The backend URL (`postgres://…`, `redis://…`); `<BIN>_STATE_URL` overrides it. */
  url?: string
  /** Also append every audit record to the local `audit.jsonl` (the store always gets it). */
  audit_file?: boolean
  /**
   * How long (ms) a run waits for another machine's attempt with the same idempotency key to finish before it
   * answers `idempotency_in_doubt`; default {@link DEFAULT_PENDING_WAIT_MS}.
   */
  pending_wait_ms?: number
}

/** How long a second machine waits for a first one's attempt with the same key to finish, before "in doubt". */
export const DEFAULT_PENDING_WAIT_MS = 10_000

/** The bounds of `pending_wait_ms`: 0 answers "in doubt" at once; more than ten minutes is a hung run, not a wait. */
const PENDING_WAIT_BOUNDS = { min: 0, max: 600_000 } as const

/** The settings under `agentcli.state`. */
export function stateSettings(config: ToolConfig): StateSettings {
  const raw = readToolSettings(config).state
  return typeof raw === 'object' && raw !== null ? (raw as StateSettings) : {}
}

/**
 * The tool author's `agentcli.state.pending_wait_ms`, checked; unset is {@link DEFAULT_PENDING_WAIT_MS}. Only
 * package.json sets it: a shorter wait answers "in doubt" sooner (a refusal, never a second change), but how long
 * a fleet waits is the tool's decision, not each caller's.
 */
export function pendingWaitMsOf(config: ToolConfig): number {
  return integerSetting(config, {
    section: 'state',
    key: 'pending_wait_ms',
    fallback: DEFAULT_PENDING_WAIT_MS,
    ...PENDING_WAIT_BOUNDS,
    unit: 'milliseconds',
  })
}

/**
 * `<BIN>_STATE_URL`, else `agentcli.state.url`: unset is today's files; `postgres://` / `postgresql://` is
 * PostgreSQL; `redis://` / `rediss://` is Redis. Anything else is `E_CONFIG`: a typo must never fall back to
 * machine-local files, where single use silently stops holding across machines.
 */
export function stateLocation(config: ToolConfig): StateLocation {
  const env = toolEnv(config.bin)
  const name = env.name('STATE_URL')
  const fromEnv = env.get('STATE_URL')
  const fromSettings = stateSettings(config).url
  const url = fromEnv || fromSettings
  if (!url) return { kind: 'file' }
  const source = fromEnv ? `$${name}` : 'package.json agentcli.state.url'
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase()
  if (scheme === 'postgres' || scheme === 'postgresql') return { kind: 'postgres', url, source }
  if (scheme === 'redis' || scheme === 'rediss') return { kind: 'redis', url, source }
  throw new AgentError('E_CONFIG', `${source} must be a postgres:// or redis:// URL`, {
    details: {
      setting: source,
      got: redactUrl(url),
      allowed: ['postgres://…', 'postgresql://…', 'redis://…', 'rediss://…'],
      fix: `unset ${name} for machine-local files, or point it at PostgreSQL or Redis`,
    },
  })
}

/** The URL without its password, for messages and `doctor`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '<unparsable URL>'
  }
}
