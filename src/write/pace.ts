import { stopIfInterrupted } from '../errors/interrupted.js'

/** How long a loop over a batch may hold the event loop before it lets a signal handler run. */
export const SLICE_MS = 20

/**
 * `fn` over every item, in order, yielding to the event loop every {@link SLICE_MS} so that SIGINT/SIGTERM is
 * handled while a large batch is worked through; a signal stops the loop at the next slice with `E_INTERRUPTED`.
 * Synchronous work between slices only: `fn` must not await.
 */
export async function mapPaced<T, R>(
  items: Iterable<T>,
  fn: (item: T, index: number) => R,
  signal: AbortSignal,
): Promise<R[]> {
  stopIfInterrupted(signal)
  const out: R[] = []
  let mark = performance.now()
  let index = 0
  for (const item of items) {
    out.push(fn(item, index++))
    if (performance.now() - mark >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      stopIfInterrupted(signal)
      mark = performance.now()
    }
  }
  stopIfInterrupted(signal)
  return out
}
