import { isDeepStrictEqual } from 'node:util'
import { earnedReason, type ReleaseReadiness } from './readiness.js'

/*
 * `release_readiness` in the compact `reference`: the keys `releaseReadiness` derives from the level and the three
 * statuses (the two `*_required` that are always true, `mock_upstream_required`, `required_evidence`, the reason
 * of an earned `stable` or `beta`) are left out when they hold the derived value.
 */

/**
 * `release_readiness` with what {@link expandReadiness} derives left out; `verbatim` when it is written as it is
 * (the derivation would not give it back).
 */
export type CompactReadiness = Partial<ReleaseReadiness> & { verbatim?: true }

const KEYS: ReadonlyArray<keyof ReleaseReadiness> = [
  'level',
  'fcc_required',
  'fcc_status',
  'mock_upstream_required',
  'mock_upstream_status',
  'live_smoke_required_for_stable',
  'live_smoke_status',
  'reason',
  'required_evidence',
]

function derived(r: CompactReadiness): Partial<ReleaseReadiness> {
  const mock = r.mock_upstream_status ?? 'unknown'
  const live = r.live_smoke_status ?? 'unknown'
  return {
    fcc_required: true,
    mock_upstream_required: mock !== 'not_applicable',
    live_smoke_required_for_stable: true,
    ...(r.level === 'stable' || r.level === 'beta' ? { reason: earnedReason(r.level, mock, live) } : {}),
    required_evidence: [
      'functional_contract_coverage_100',
      ...(mock === 'not_applicable' ? [] : ['mock_upstream_contract_tests']),
      'recorded_live_smoke_for_stable',
    ],
  }
}

/** The full `release_readiness`, its keys in their usual order. */
export function expandReadiness(c: CompactReadiness): ReleaseReadiness {
  if (c.verbatim) {
    const { verbatim: _, ...rest } = c
    return rest as ReleaseReadiness
  }
  const full: Record<string, unknown> = { ...derived(c), ...c }
  const out: Record<string, unknown> = {}
  for (const key of KEYS) if (key in full) out[key] = full[key]
  return Object.assign(out, full) as ReleaseReadiness
}

/** `release_readiness` without what can be derived; as it is when the derivation would not give it back. */
export function compactReadiness(r: ReleaseReadiness): CompactReadiness {
  const assumed = derived(r) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(r)) if (!isDeepStrictEqual(value, assumed[key])) out[key] = value
  return isDeepStrictEqual(expandReadiness(out), r) ? out : { ...r, verbatim: true }
}
