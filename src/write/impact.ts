import type { Plan } from './plan.js'
import type { Risk } from './risk.js'

/** How many target ids a preview names; the rest are counted in `targets_more`. */
export const NAMED_TARGETS = 100

/** What a dry-run says a change reaches, in plain data: how many targets, which ones, what cannot be undone. */
export type Impact = {
  action: string
  blast_radius: string
  target_count: number
  targets: string[]
  targets_more?: number
  reversible: boolean
  undo: string | null
  cost: string | null
}

/** The impact of a plan under a command's declared risk: the targets are the plan's, named one by one. */
export function impactOf(risk: Risk, plan: Plan<unknown>): Impact {
  const ids = (plan.targets ?? []).map((t) => t.id)
  const named = ids.slice(0, NAMED_TARGETS)
  return {
    action: risk.action,
    blast_radius: risk.blast_radius,
    target_count: ids.length,
    targets: named,
    ...(ids.length > named.length ? { targets_more: ids.length - named.length } : {}),
    reversible: risk.reversible,
    undo: risk.undo,
    cost: risk.cost,
  }
}
