import { AgentError } from '../errors/agent-error.js'
import type { CatalogueEntry } from '../errors/catalogue.js'
import type { ToolConfig } from '../runtime/tool-config.js'

/** Release-readiness statuses (spec 002 §11). */
export type EvidenceStatus = 'verified' | 'missing' | 'not_applicable' | 'unknown'

/** What a tool declares under `"agentcli"` in its package.json. */
export type ToolSettings = {
  /** Extension error codes. */
  errors: Record<string, Partial<CatalogueEntry>>
  /** How much harm a wrong call can do: `low`, `medium`, `high`. */
  risk_tier?: string
  /** Declared release evidence. */
  release_readiness?: {
    level?: string
    fcc_status?: EvidenceStatus
    mock_upstream_status?: EvidenceStatus
    live_smoke_status?: EvidenceStatus
    reason?: string
  }
  [key: string]: unknown
}

/** Read the `"agentcli"` section of the tool's package.json. */
export function readToolSettings(config: Pick<ToolConfig, 'pjson'>): ToolSettings {
  const raw = (config.pjson as { agentcli?: Partial<ToolSettings> }).agentcli ?? {}
  return { ...raw, errors: raw.errors ?? {} }
}

/** An integer setting at `agentcli.<section>.<key>`: its default, its bounds (no `max`: unbounded above), its unit. */
export type IntegerSetting = {
  section: string
  key: string
  fallback: number
  min: number
  max?: number
  unit?: string
}

/**
 * The integer a tool's author set at `agentcli.<section>.<key>` in package.json (never from the environment), or
 * its default when unset. Anything else is `E_CONFIG` naming the setting, what is allowed and what was found.
 */
export function integerSetting(config: Pick<ToolConfig, 'pjson'>, s: IntegerSetting): number {
  const section = readToolSettings(config)[s.section]
  const got = typeof section === 'object' && section !== null ? (section as Record<string, unknown>)[s.key] : undefined
  if (got === undefined) return s.fallback
  if (Number.isInteger(got) && (got as number) >= s.min && (s.max === undefined || (got as number) <= s.max))
    return got as number
  const setting = `agentcli.${s.section}.${s.key}`
  throw new AgentError('E_CONFIG', `${setting} in package.json must be an integer${s.unit ? ` of ${s.unit}` : ''}`, {
    details: { setting, allowed: s.max === undefined ? `${s.min} or more` : `${s.min}..${s.max}`, got },
  })
}
