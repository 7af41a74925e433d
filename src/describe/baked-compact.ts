import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { CompactReference } from './compact-reference.js'
import type { Reference } from './reference.js'

/**
 * The compact `reference` the build computed (`agentcli-build`, beside the bundle): a first line
 * `{"agentcli_compact_reference":1,"bundle":{"size":…,"mtime_ms":…}}` naming the bundle it was computed with, then
 * the full reference's JSON, then its compact form's JSON.
 */
export const BAKED_COMPACT_FILE = join('dist', 'agentcli.compact-reference.json')

/** The first line's marker, and the version of this file's layout. */
export const BAKED_COMPACT_MARK = 'agentcli_compact_reference'

/**
 * The compact form of `reference` as the build computed it, when this run is the bundle that build wrote (its size
 * and mtime) and `reference` is exactly the one the build compacted: the same JSON text, and nothing JSON would not
 * give back as it is (no `undefined`, `-0`, non-finite number, array hole or object of another class), so the
 * compaction, a function of that value, gives what the build stored. Else undefined: the caller compacts.
 */
export function bakedCompact(
  root: string,
  bundle: string | undefined,
  reference: Reference,
): CompactReference | undefined {
  if (!bundle) return undefined
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
    const header = JSON.parse(text.slice(0, first)) as { bundle?: { size?: unknown; mtime_ms?: unknown } }
    if ((header as Record<string, unknown>)[BAKED_COMPACT_MARK] !== 1) return undefined
    const stat = statSync(bundle)
    if (header.bundle?.size !== stat.size || header.bundle?.mtime_ms !== stat.mtimeMs) return undefined
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
