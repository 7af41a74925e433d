import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { vouchClean } from '../output/redact-proof.js'
import type { CompactReference } from './compact-reference.js'
import { DESCRIPTIONS_FILE } from './descriptions.js'
import type { Reference } from './reference.js'

/**
 * The compact `reference` the build computed (`agentcli-build`, beside the bundle): a first line
 * `{"agentcli_compact_reference":1,"bundle_id":"…"}` naming the bundle it was computed with, then the full
 * reference's JSON, then its compact form's JSON, and, when the build proved that a run of that bundle answers with
 * this form for as long as its inputs are these, a fourth line, the byte lengths of {@link COMPACT_INPUTS}
 * (`[n1,n2,n3]`), followed by their exact bytes one after the other to the end of the file (see
 * {@link storedCompact}): compared as bytes, a run decodes and escapes none of the ≈ 130 KB they hold. With the
 * inputs, the full reference's line is empty: the command memo holds its parts (`./command-reference-memo.ts`), and
 * a run whose inputs changed builds the reference anew. The header's
 * `redaction_clean` (`{keys, bytes}`), when present, says the build walked the compact form (of `bytes` bytes) as an
 * envelope's `data` with no secret registered and the tool's declared keys `keys`, and the redactor changed nothing:
 * the form a run prints is vouched for under those rules (src/output/redact-proof.ts).
 */
export const BAKED_COMPACT_FILE = join('dist', 'agentcli.compact-reference.json')

/** The first line's marker, and the version of this file's layout. */
export const BAKED_COMPACT_MARK = 'agentcli_compact_reference'

/** The files besides the bundle that `reference` is computed from, in the order the stored file holds them. */
export const COMPACT_INPUTS: readonly string[] = ['package.json', 'oclif.manifest.json', DESCRIPTIONS_FILE]

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
  const stored = storedParts(root, id)
  if (!stored || stored.full() !== JSON.stringify(reference) || !plainJson(reference, 0)) return undefined
  return compactOf(stored)
}

/**
 * The compact form the build stored, without building the reference (nor loading oclif's `Config`): when this code
 * is the bundle the build wrote and package.json, the manifest and the descriptions file are, byte for byte, the
 * ones the build ran that bundle on and saw it answer with the stored form ({@link bakedCompact}'s check passed
 * then). `reference` is a function of the bundle and those three texts alone (no plugins: the build records no
 * inputs for a tool with any), so it would pass again. Else undefined: the caller builds the reference.
 */
export function storedCompact(root: string, id = bundleId()): CompactReference | undefined {
  const stored = storedParts(root, id)
  if (!stored?.inputs) return undefined
  try {
    for (const [i, file] of COMPACT_INPUTS.entries())
      if (!readFileSync(join(root, file)).equals(stored.inputs[i]!)) return undefined
    return compactOf(stored)
  } catch {
    return undefined
  }
}

type Stored = { full: () => string; compact: string; clean: string | undefined; inputs: Buffer[] | undefined }

/** The stored compact form, vouched for as the build proved it clean (see {@link BAKED_COMPACT_FILE}). */
function compactOf(stored: Stored): CompactReference {
  const compact = JSON.parse(stored.compact) as CompactReference
  if (stored.clean !== undefined) vouchClean(compact, stored.clean)
  return compact
}

/**
 * The stored file's parts past its header, when the header names bundle `id`: the full reference's JSON (decoded
 * when asked), the compact form's, the declared keys it was proven clean under, and the inputs' bytes when the
 * file records them (lengths that add up to what follows the fourth line; anything else records none).
 */
function storedParts(root: string, id: string | undefined): Stored | undefined {
  if (!id) return undefined
  try {
    const bytes = readFileSync(join(root, BAKED_COMPACT_FILE))
    // Where its first four lines end: the header, the full reference, the compact form, the inputs' lengths.
    const ends: number[] = []
    for (let at = bytes.indexOf(10); at !== -1 && ends.length < 4; at = bytes.indexOf(10, at + 1)) ends.push(at)
    const [header, full, compact, lengths] = ends
    if (header === undefined || full === undefined || compact === undefined) return undefined
    const head = JSON.parse(bytes.toString('utf8', 0, header)) as Record<string, unknown>
    if (head[BAKED_COMPACT_MARK] !== 1 || head.bundle_id !== id) return undefined
    const proof = head.redaction_clean as { keys?: unknown; bytes?: unknown } | undefined
    return {
      full: () => bytes.toString('utf8', header + 1, full),
      compact: bytes.toString('utf8', full + 1, compact),
      // The proof holds for the compact form it was made for: one of another length is not vouched for.
      clean: typeof proof?.keys === 'string' && proof.bytes === compact - full - 1 ? proof.keys : undefined,
      inputs: lengths === undefined ? undefined : inputsOf(bytes, compact + 1, lengths),
    }
  } catch {
    return undefined
  }
}

/** The inputs' bytes, split by the lengths on the line from `start` to `end`; undefined unless they add up. */
function inputsOf(bytes: Buffer, start: number, end: number): Buffer[] | undefined {
  const lengths = JSON.parse(bytes.toString('latin1', start, end)) as unknown
  if (!Array.isArray(lengths) || lengths.length !== COMPACT_INPUTS.length) return undefined
  const out: Buffer[] = []
  let at = end + 1
  for (const n of lengths) {
    if (!Number.isSafeInteger(n) || n < 0 || at + n > bytes.length) return undefined
    out.push(bytes.subarray(at, at + n))
    at += n
  }
  return at === bytes.length ? out : undefined
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
