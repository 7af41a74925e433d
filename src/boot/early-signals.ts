/** Signals that arrived before the entry could answer them, handed over to it (see {@link holdSignals}). */
export type HeldSignals = {
  /** The first signal received so far, if any. */
  first(): NodeJS.Signals | undefined
  /** Stop holding: the entry's own handlers take over. */
  release(): void
}

/**
 * From the first line of a start until the entry installs its handlers, SIGINT/SIGTERM would kill the process
 * with no envelope (Node's default). Hold them instead; the entry answers a held signal with `E_INTERRUPTED`.
 */
export function holdSignals(): HeldSignals {
  let first: NodeJS.Signals | undefined
  const hold = (signal: NodeJS.Signals) => {
    first ??= signal
  }
  process.on('SIGINT', hold)
  process.on('SIGTERM', hold)
  return {
    first: () => first,
    release: () => {
      process.off('SIGINT', hold)
      process.off('SIGTERM', hold)
    },
  }
}
