import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CompactReference } from './compact-reference.js'
import type { Reference } from './reference.js'

/**
 * The compact `reference` the build computed (`agentcli-build`, beside the bundle): a first line
 * `{"agentcli_compact_reference":1,"bundle_id":"…"}` naming the bundle it was computed with, then the full
 * reference's JSON, then its compact form's JSON.
 */
export const BAKED_COMPACT_FILE = join('dist', 'agentcli.compact-reference.json')

/** The first line's marker, and the version of this file's layout. */
export const BAKED_COMPACT_MARK = 'agentcli_compact_reference'

// The first line of a bundle `agentcli-build` wrote declares it (src/build/bundle.ts); from the modules it is not.
declare const __agentcli_bundle_id: string | undefined

/** The id `agentcli-build` gave the bundle this code runs from (a digest of its text); undefined from the modules. */
export function bundleId(): string | undefined {
  return typeof __agentcli_bundle_id === 'string' ? __agentcli_bundle_id : undefined
}

/**
 * The compact form of `reference` as the build computed it, when this code is the bundle that build wrote (its id)
 * and `reference` is exactly the one the build compacted: the same JSON text, and nothing JSON would not give back
 * as it is (no `undefined`, `-0`, non-finite number, array hole or object of another class), so the compaction, a
 * function of that value, gives what the build stored. Else undefined: the caller compacts.
 */
export function bakedCompact(root: string, reference: Reference, id = bundleId()): CompactReference | undefined {
  if (!id) return undefined
  let text: string
  try {
    text = readFileSync(join(root, BAKED_COMPACT_FILE), 'utf8')
  } catch {
    return undefined
  }
  const first = text.indexOf('\n')
  const second = text.indexOf('\n', first + 1)
  if (first < 0 || second < 0) return undefined
  try {
    const header = JSON.parse(text.slice(0, first)) as Record<string, unknown>
    if (header[BAKED_COMPACT_MARK] !== 1 || header.bundle_id !== id) return undefined
    if (text.slice(first + 1, second) !== JSON.stringify(reference) || !plainJson(reference, 0)) return undefined
    return JSON.parse(text.slice(second + 1)) as CompactReference
  } catch {
    return undefined
  }
}

/** Whether `value` is what `JSON.parse` of its own JSON gives back, member for member. */
function plainJson(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0)
  if (typeof value !== 'object' || depth > 256) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !plainJson(value[i], depth + 1)) return false
    return Object.getPrototypeOf(value) === Array.prototype && Object.keys(value).length === value.length
  }
  if (Object.getPrototypeOf(value) !== Object.prototype || Object.getOwnPropertySymbols(value).length > 0) return false
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false
    if (!plainJson((value as Record<string, unknown>)[key], depth + 1)) return false
  }
  return true
}
