import { validationError } from '../errors/agent-error.js'

/** The most items a batch write takes unless its command declares otherwise (`WriteCommand.maxBatchItems`). */
export const DEFAULT_MAX_BATCH_ITEMS = 10_000

/**
 * A batch larger than its command's bound is `E_VALIDATION` (`allowed: {max_items}`, `got`: the count, `param`:
 * the argument), checked after the parse and before anything is read or written: such a call can never succeed
 * as written. The items of a call are the values of its variadic (`multiple`) arguments, as parsed; their count
 * is returned (the policy gate counts targets from it, never from a number the tool reports).
 */
export function checkBatchSize(
  id: string,
  declared: Record<string, unknown>,
  parsed: Record<string, unknown>,
  max: number,
): number {
  let count = 0
  const names: string[] = []
  for (const [name, def] of Object.entries(declared)) {
    const value = parsed[name]
    if ((def as { multiple?: boolean }).multiple !== true || !Array.isArray(value)) continue
    count += value.length
    names.push(name)
  }
  if (count <= max) return count
  throw validationError(
    `${id.replaceAll(':', ' ')} takes at most ${max} items in one call (got ${count}); split the batch`,
    { max_items: max },
    count,
    { param: names.join(','), fix: `run it in batches of at most ${max} items` },
  )
}
