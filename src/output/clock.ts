/**
 * The clock of a run's `duration_ms`. Not `performance.now()`: the first use of the `performance` global loads
 * Node's perf_hooks internals (≈ 1–2 ms, measured on the fast path), a cost `node -e 0` never pays.
 */
export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6
}
