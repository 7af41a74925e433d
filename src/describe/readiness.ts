import type { EvidenceStatus, ToolSettings } from '../tool-settings.js'

/** Release readiness as `reference` reports it (spec 002 §11, §13). */
export type ReleaseReadiness = {
  level: 'stable' | 'beta' | 'unpublishable'
  fcc_required: boolean
  fcc_status: EvidenceStatus
  mock_upstream_required: boolean
  mock_upstream_status: EvidenceStatus
  live_smoke_required_for_stable: boolean
  live_smoke_status: EvidenceStatus
  reason: string
  required_evidence: string[]
}

const STATUSES: readonly EvidenceStatus[] = ['verified', 'missing', 'not_applicable', 'unknown']
const LEVELS = ['stable', 'beta', 'unpublishable'] as const

function status(value: unknown): EvidenceStatus {
  return STATUSES.includes(value as EvidenceStatus) ? (value as EvidenceStatus) : 'unknown'
}

const present = (s: EvidenceStatus) => s === 'verified' || s === 'not_applicable'

/**
 * The level a tool may claim from its declared evidence. A claim the evidence does not back is never reported
 * as made: `stable` without live smoke, or anything without verified FCC, is `unpublishable` with the reason.
 */
export function releaseReadiness(settings: ToolSettings): ReleaseReadiness {
  const declared = settings.release_readiness ?? {}
  const fcc = status(declared.fcc_status)
  const mock = status(declared.mock_upstream_status)
  const live = status(declared.live_smoke_status)
  const claimed = LEVELS.includes(declared.level as (typeof LEVELS)[number])
    ? (declared.level as (typeof LEVELS)[number])
    : undefined
  const gaps: string[] = []
  if (fcc !== 'verified') gaps.push(`fcc_status is ${fcc}`)
  if (!present(mock)) gaps.push(`mock_upstream_status is ${mock}`)
  const earned = gaps.length > 0 ? 'unpublishable' : present(live) ? 'stable' : 'beta'
  const rank = { unpublishable: 0, beta: 1, stable: 2 } as const
  let level: ReleaseReadiness['level'] = claimed && rank[claimed] <= rank[earned] ? claimed : earned
  let reason: string
  if (claimed && rank[claimed] > rank[earned]) {
    level = 'unpublishable'
    const missing = claimed === 'stable' && !present(live) ? [...gaps, `live_smoke_status is ${live}`] : gaps
    reason = `declared ${claimed}, but ${missing.join(', ')}`
  } else if (level === 'stable') reason = 'FCC verified, mock upstream verified, live smoke recorded.'
  else if (level === 'beta') reason = `Stable requires recorded live smoke/E2E evidence (live_smoke_status is ${live}).`
  else reason = gaps.length > 0 ? `not releasable: ${gaps.join(', ')}` : (declared.reason ?? 'declared unpublishable')
  if (declared.reason && level !== 'unpublishable') reason = declared.reason
  return {
    level,
    fcc_required: true,
    fcc_status: fcc,
    mock_upstream_required: mock !== 'not_applicable',
    mock_upstream_status: mock,
    live_smoke_required_for_stable: true,
    live_smoke_status: live,
    reason,
    required_evidence: [
      'functional_contract_coverage_100',
      'mock_upstream_contract_tests',
      'recorded_live_smoke_for_stable',
    ],
  }
}
