/** A resource a write acts on, with its version (etag, changekey, updated_at) when it has one. */
export type Target = { id: string; version: string | number | null }

/** One target that moved between the dry-run and the confirm: `version_now` is null when it is gone. */
export type Drift = {
  id: string
  version_then: string | number | null
  version_now: string | number | null
  gone: boolean
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Targets in one order whatever order the plan listed them in: by id, ties (a tool listing one id twice) by
 * version, so the same set always binds to the same bytes.
 */
export function sortTargets(targets: readonly Target[]): Target[] {
  return [...targets].sort((a, b) => cmp(a.id, b.id) || cmp(String(a.version), String(b.version)))
}

/** Whether two target lists are the same set of ids with the same versions. */
export function sameTargets(a: readonly Target[], b: readonly Target[]): boolean {
  const x = sortTargets(a)
  const y = sortTargets(b)
  return x.length === y.length && x.every((t, i) => t.id === y[i]!.id && t.version === y[i]!.version)
}

/** What moved between the previewed targets and the current ones. */
export function targetDrift(
  then: readonly Target[],
  now: readonly Target[],
): { ok: false; reason: 'target_changed' | 'state_drift'; drift: Drift[] } {
  const current = new Map(now.map((t) => [t.id, t.version]))
  const previewed = new Set(then.map((t) => t.id))
  const drift: Drift[] = []
  for (const t of then) {
    if (!current.has(t.id)) drift.push({ id: t.id, version_then: t.version, version_now: null, gone: true })
    else if (current.get(t.id) !== t.version)
      drift.push({ id: t.id, version_then: t.version, version_now: current.get(t.id)!, gone: false })
  }
  // Only a target that appeared (and nothing that moved) means the call now aims at something else.
  if (drift.length === 0 && now.some((t) => !previewed.has(t.id))) return { ok: false, reason: 'target_changed', drift }
  return { ok: false, reason: 'state_drift', drift }
}

/**
 * The drift when the plan could not find a target any more (a tool's `plan()` answered `E_NOT_FOUND`): the
 * target the error names, else every previewed target, since any of them may be the one that went.
 */
export function goneDrift(then: readonly Target[] | undefined, missingId: unknown): Drift[] {
  const all = then ?? []
  const named = all.filter((t) => t.id === missingId)
  return (named.length > 0 ? named : all).map((t) => ({
    id: t.id,
    version_then: t.version,
    version_now: null,
    gone: true,
  }))
}
