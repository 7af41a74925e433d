/**
 * Documents the build proved the redactor leaves unchanged: the compact `reference` the build stored
 * (`src/describe/baked-compact.ts`), walked at build time as an envelope's `data` with no secret registered and the
 * tool's declared keys, changed nothing. The redactor's walk skips such a value only under the same rules (no
 * secret registered, the same declared keys, the same place in an envelope); anything else is walked as always.
 * Only the stored compact form vouches (an import-graph rule): nothing a command computes is ever skipped.
 */
const proven = new WeakMap<object, string>()

/**
 * Vouch for `value`, proven clean under the declared keys `keys` (`sensitiveKeysSignature()` at the proof). Frozen
 * whole first, so the value walked later is the value proven: a change to it throws instead.
 */
export function vouchClean(value: object, keys: string): void {
  freezeDeep(value)
  proven.set(value, keys)
}

/** The declared keys `value` was proven clean under; undefined when nothing vouched for it. */
export function provenUnder(value: object): string | undefined {
  return proven.get(value)
}

function freezeDeep(value: object): void {
  Object.freeze(value)
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) freezeDeep(child)
}
