import type { EvidenceStatus, ToolSettings } from '../settings/package-section.js'

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

// Mock upstream tests may not apply (a tool with no upstream); live smoke always does: only a recorded run is
// evidence for `stable` (seed 002 §11: `stable` needs a live smoke record; "no real E2E possible" is `beta`).
const present = (s: EvidenceStatus) => s === 'verified' || s === 'not_applicable'
const recorded = (s: EvidenceStatus) => s === 'verified'

/** The package.json key a tool declares its evidence under. */
const KEY = 'agentcli.release_readiness'

/**
 * What a tool must do to earn the next level, one step per missing piece of evidence that applies (what is
 * verified or declared not applicable is not asked for). A tool that declares nothing is told how to declare.
 */
export function readinessFixes(settings: ToolSettings): string[] {
  const declared = settings.release_readiness
  if (!declared || Object.keys(declared).length === 0)
    return [
      `declare the evidence in package.json under ${KEY}: {"fcc_status": "verified"|"missing", "mock_upstream_status": "verified"|"missing"|"not_applicable", "live_smoke_status": "verified"|"missing"|"not_applicable"}; it stays unpublishable until then`,
    ]
  const fcc = status(declared.fcc_status)
  const mock = status(declared.mock_upstream_status)
  const live = status(declared.live_smoke_status)
  const fixes: string[] = []
  if (fcc !== 'verified')
    fixes.push(
      `fcc_status is ${fcc}: give every public command a command-level test (the fccGuard test enumerates them from reference), then set ${KEY}.fcc_status to "verified"`,
    )
  if (!present(mock))
    fixes.push(
      `mock_upstream_status is ${mock}: add mock-upstream contract tests (failure, auth, pagination, empty result, rate limit, timeout), then set ${KEY}.mock_upstream_status to "verified" (or "not_applicable" when the tool calls no upstream)`,
    )
  if (!recorded(live))
    fixes.push(
      `live_smoke_status is ${live}: record a live smoke/E2E run of this release candidate, then set ${KEY}.live_smoke_status to "verified" (required for stable; not_applicable stays beta)`,
    )
  return fixes
}

/** Why a tool is at the level it earned, `stable` or `beta` (the compact `reference` derives it back). */
export function earnedReason(level: 'stable' | 'beta', mock: EvidenceStatus, live: EvidenceStatus): string {
  return level === 'stable'
    ? `FCC verified, mock upstream ${mock === 'verified' ? 'verified' : 'not applicable'}, live smoke recorded.`
    : `Stable requires recorded live smoke/E2E evidence (live_smoke_status is ${live}).`
}

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
  const earned = gaps.length > 0 ? 'unpublishable' : recorded(live) ? 'stable' : 'beta'
  const rank = { unpublishable: 0, beta: 1, stable: 2 } as const
  let level: ReleaseReadiness['level'] = claimed && rank[claimed] <= rank[earned] ? claimed : earned
  let reason: string
  if (claimed && rank[claimed] > rank[earned]) {
    level = 'unpublishable'
    const missing = claimed === 'stable' && !recorded(live) ? [...gaps, `live_smoke_status is ${live}`] : gaps
    reason = `declared ${claimed}, but ${missing.join(', ')}`
  } else if (level !== 'unpublishable') reason = earnedReason(level, mock, live)
  else if (Object.keys(declared).length === 0)
    reason = `no release evidence declared (${KEY} is empty): fcc_status is unknown, mock_upstream_status is unknown`
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
      ...(mock === 'not_applicable' ? [] : ['mock_upstream_contract_tests']),
      'recorded_live_smoke_for_stable',
    ],
  }
}
