import { AgentError } from '../errors/agent-error.js'
import type { Catalogue, ErrorCode } from '../errors/catalogue.js'
import type { BatchItem } from './preview.js'

/*
 * Partial success, first-class (seed 000 §8, spec 002 §9). A batch write reports every item; with an idempotency
 * key the items that landed are recorded, so the same batch run again (dry-run → confirm, same key) applies only
 * the rest and reports the landed ones as `already_applied`, never applying them twice.
 */

/** An item that landed in an earlier run of the same batch (same key, same arguments). */
export type LandedItem = { id: string; action: string }

/** The data of a batch write. */
export type BatchData = {
  results: BatchItem[]
  summary: { ok_count: number; error_count: number; already_applied_count?: number }
}

/** What a plan looks like to the resume filter (the fields of `Plan` it touches). */
type Filterable = {
  changes: Array<{ id: string | null }>
  targets?: Array<{ id: string }>
  rejected?: Array<{ id: string }>
  state?: unknown
}

function isKeyed(value: unknown): value is Array<{ id: string }> {
  return Array.isArray(value) && value.every((v) => typeof (v as { id?: unknown } | null)?.id === 'string')
}

/**
 * The plan without the items that already landed: their changes, targets and rejections (a landed delete now
 * reads as "not found"), and, when `state` is an array of `{id}` (the batch convention), their state.
 */
export function withoutLanded<P extends Filterable>(plan: P, landed: ReadonlyMap<string, LandedItem>): P {
  if (landed.size === 0) return plan
  const keep = (id: string | null) => id === null || !landed.has(id)
  const out: P = { ...plan, changes: plan.changes.filter((c) => keep(c.id)) }
  if (plan.targets) out.targets = plan.targets.filter((t) => keep(t.id))
  if (plan.rejected) out.rejected = plan.rejected.filter((r) => keep(r.id))
  if (isKeyed(plan.state)) out.state = plan.state.filter((s) => keep(s.id))
  return out
}

/** The landed items of a batch outcome: every item reported ok. */
export function landedOf(results: readonly BatchItem[]): LandedItem[] {
  return results.filter((r) => r.ok).map((r) => ({ id: r.id, action: (r as { action: string }).action }))
}

/** The batch results of a batch failure thrown by {@link batchOutcome}, if that is what `error` is. */
export function partialResults(error: unknown): BatchItem[] | undefined {
  if (!(error instanceof AgentError) || error.details.batch !== true) return undefined
  const results = error.details.results
  return Array.isArray(results) ? (results as BatchItem[]) : undefined
}

/**
 * The outcome of a batch: this run's items plus those that landed before (`already_applied: true`). All ok is
 * the data; any failure fails the envelope. Its code is the first failed item's that re-running the batch cannot
 * fix (neither retryable nor `E_CONFLICT`, which a fresh dry-run re-reads), else the first failed item's: so
 * exit 7/8 (retryable) and 6 mean "re-run the resume command", anything else "fix the failed items first".
 * `keyFlag`: whether the command takes `--idempotency-key` (a fix names only a flag the command has).
 */
export function batchOutcome(
  items: readonly BatchItem[],
  landed: ReadonlyMap<string, LandedItem>,
  catalogue: Catalogue,
  resume: string | undefined,
  keyFlag = false,
): BatchData {
  const fresh = new Set(items.map((i) => i.id))
  const before: BatchItem[] = [...landed.values()]
    .filter((l) => !fresh.has(l.id))
    .map((l) => ({ id: l.id, ok: true, action: l.action, already_applied: true }))
  const results = [...before, ...items]
  const failed = results.filter((i): i is Extract<BatchItem, { ok: false }> => !i.ok)
  const summary = {
    ok_count: results.length - failed.length,
    error_count: failed.length,
    // Only on a resumed batch: a first run's summary keeps the shape it always had.
    ...(before.length > 0 ? { already_applied_count: before.length } : {}),
  }
  if (failed.length === 0) return { results, summary }
  const rerunFixes = (code: string) => code === 'E_CONFLICT' || catalogue.lookup(code)?.retryable === true
  const first = failed.find((f) => !rerunFixes(f.error.code)) ?? failed[0]!
  throw new AgentError(
    first.error.code as ErrorCode,
    `${failed.length} of ${results.length} items failed; ${first.id}: ${first.error.message}`,
    {
      details: {
        batch: true,
        partial: summary.ok_count > 0,
        results,
        summary,
        failed_ids: failed.map((f) => f.id),
        ...(resume
          ? { resume }
          : summary.ok_count > 0
            ? {
                fix: keyFlag
                  ? 'pass --idempotency-key to make this batch resumable, or re-run it with only failed_ids'
                  : 're-run it with only failed_ids (dry-run, then confirm)',
              }
            : {}),
      },
      ...(resume && rerunFixes(first.error.code)
        ? { hint: `re-run the same batch to apply only the failed items: ${resume}` }
        : {}),
    },
  )
}
