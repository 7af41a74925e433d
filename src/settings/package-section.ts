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
export function readToolSettings(config: ToolConfig): ToolSettings {
  const raw = (config.pjson as { agentcli?: Partial<ToolSettings> }).agentcli ?? {}
  return { ...raw, errors: raw.errors ?? {} }
}
