// Symbols from the global registry: the bundle and the modules may each hold a copy of this file.
const MARK = Symbol.for('agentcli.before_change')
const COUNT = Symbol.for('agentcli.change_count')
type Counter = { [COUNT]?: number }

/**
 * Mark an error as known to precede any change of state: a write that fails with it changed nothing, so the
 * framework gives the confirm token back and clears the idempotency record instead of leaving it "in doubt".
 * The framework's locks and atomic JSON writes mark their own failures; mark yours only when it is true.
 */
export function beforeChange<E>(error: E): E {
  if (typeof error === 'object' && error !== null)
    Object.defineProperty(error, MARK, { value: true, configurable: true })
  return error
}

/** Whether {@link beforeChange} marked this error. */
export function isBeforeChange(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARK] === true
}

/** Take the mark away (a change already happened before the marked failure). */
export function clearBeforeChange(error: unknown): void {
  if (isBeforeChange(error)) delete (error as Record<symbol, unknown>)[MARK]
}

/** Count one completed change of state (the framework's atomic writes do). */
export function noteChange(): void {
  const g = globalThis as Counter
  g[COUNT] = (g[COUNT] ?? 0) + 1
}

/** How many changes {@link noteChange} counted in this process. */
export function changeCount(): number {
  return (globalThis as Counter)[COUNT] ?? 0
}
