/** A bounded sample of what a write will create or change, for its dry-run preview. */
export type ItemsPreview<T> = {
  /** The first items, in order: at most `max`. */
  items: T[]
  /** How many items there are in all. */
  count: number
  /** Whether `items` is cut short of `count`. */
  truncated: boolean
}

/** Default number of items a preview shows: enough to recognise the input, small enough for an agent's context. */
export const PREVIEW_ITEMS = 20

/**
 * What a bulk write's dry-run shows: the parsed items themselves (bounded) with their count, so the person or
 * agent confirming sees what will change, not only a path and a checksum.
 */
export function previewItems<T>(all: Iterable<T>, max = PREVIEW_ITEMS): ItemsPreview<T> {
  const items: T[] = []
  let count = 0
  for (const item of all) {
    if (count < max) items.push(item)
    count++
  }
  return { items, count, truncated: count > items.length }
}
