import type { ZodType } from 'zod'
import { toJsonSchema } from '../describe/json-schema.js'
import { validationError } from '../errors/agent-error.js'
import { type Declares, effectiveOutput } from '../schema/declared-output.js'
import { deprecatedFields, deprecationNotice } from '../schema/deprecation.js'
import { loadZod } from '../schema/output.js'
import type { Notice } from './envelope.js'
import { matches, OPEN, pageItemSchemas, schemaPaths } from './field-paths.js'

/*
 * The one owner of `--fields` (seed 000 §3): which paths a command accepts (also published in `reference`), how a
 * request is checked and normalised, and how data and each streamed item are projected. Commands (either path),
 * streams and `reference` call only this; the universal-flag scan only hands over the raw text.
 */

/** Parsed dotted paths, each split into segments. */
export type FieldPaths = string[][]

/** A checked `--fields` request: the paths to keep, in full form (a list's shorthand already expanded). */
export type FieldSelection = { paths: FieldPaths }

/** The keys of a page besides `items`: kept when a request is all shorthand (`id,title`). */
const PAGE_KEYS = ['count', 'next_cursor', 'has_more']

/** Parse `a,b.c` into paths; empty segments are a usage mistake. */
export function parseFields(raw: string): FieldPaths {
  const parts = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
  if (parts.length === 0)
    throw validationError('--fields needs at least one field name', 'a,b.c', raw, { param: '--fields' })
  const paths = parts.map((part) => part.split('.'))
  const empty = parts.find((_, i) => paths[i]!.some((segment) => segment.length === 0))
  if (empty !== undefined)
    throw validationError(`--fields has an empty path segment in '${empty}'`, 'a,b.c', raw, { param: '--fields' })
  return paths
}

/**
 * Every path `--fields` accepts for data of `schema` (undefined: untyped, so any path). On a page the item
 * fields are also accepted bare (`id` for `items.id`) unless the name is a key of the page itself.
 */
export function acceptedFields(schema: ZodType | undefined): { paths: string[]; item_shorthand: string[] } {
  if (!schema) return { paths: [OPEN], item_shorthand: [] }
  const paths = schemaPaths(schema)
  const shorthand = pageItemSchemas(schema).flatMap((item) => schemaPaths(item))
  return { paths, item_shorthand: [...new Set(shorthand)].filter((p) => !matches(p, paths)) }
}

/** Check a request against the schema and expand the list shorthand; an unknown path is `E_VALIDATION`. */
export function selectFields(raw: string, schema: ZodType | undefined): FieldSelection {
  const requested = parseFields(raw)
  const { paths: valid, item_shorthand: shorthand } = acceptedFields(schema)
  const unknown: string[] = []
  let namedFull = false
  const paths = requested.map((path) => {
    const name = path.join('.')
    if (matches(name, valid)) {
      namedFull = true
      return path
    }
    if (matches(name, shorthand)) return ['items', ...path]
    unknown.push(name)
    return path
  })
  if (unknown.length > 0) {
    const allowed = [...valid, ...shorthand].filter((p) => p !== OPEN && !p.endsWith(`.${OPEN}`)).sort()
    throw validationError(
      `Unknown field${unknown.length === 1 ? '' : 's'} in --fields: ${unknown.join(', ')}. Valid fields: ${allowed.join(', ')}`,
      allowed,
      unknown.length === 1 ? unknown[0] : unknown,
      { param: '--fields' },
    )
  }
  // Only the shorthand (`id,title`): the page keys stay, as they always did. Full paths are taken exactly.
  const isPage = schema !== undefined && pageItemSchemas(schema).length > 0
  const keep = isPage && !namedFull ? PAGE_KEYS.filter((k) => valid.includes(k)).map((k) => [k]) : []
  return { paths: [...paths, ...keep] }
}

function pick(source: unknown, path: readonly string[], target: Record<string, unknown>): void {
  if (source === null || typeof source !== 'object' || path.length === 0) return
  const [head, ...rest] = path as [string, ...string[]]
  if (!Object.hasOwn(source, head)) return
  const value = (source as Record<string, unknown>)[head]
  if (rest.length === 0) {
    target[head] = value
    return
  }
  if (Array.isArray(value)) {
    const existing = Array.isArray(target[head]) ? (target[head] as Record<string, unknown>[]) : value.map(() => ({}))
    for (const [i, element] of value.entries()) pick(element, rest, existing[i] ?? {})
    target[head] = existing
    return
  }
  if (value === null || typeof value !== 'object') return
  const child = (target[head] as Record<string, unknown> | undefined) ?? {}
  pick(value, rest, child)
  target[head] = child
}

/** The `_untrusted` paths of `source` that survive a projection to `paths`, rebased so they still point right. */
function keptUntrusted(source: Record<string, unknown>, paths: FieldPaths): string[] {
  const untrusted = source._untrusted
  if (!Array.isArray(untrusted)) return []
  return untrusted.filter(
    (p) => typeof p === 'string' && paths.some((path) => p === path.join('.') || p.startsWith(`${path.join('.')}.`)),
  )
}

/** Keep only the requested paths of one value (each element of an array); `_untrusted` stays true. */
export function projectObject(source: unknown, paths: FieldPaths): unknown {
  if (Array.isArray(source)) return source.map((element) => projectObject(element, paths))
  if (source === null || typeof source !== 'object') return source
  const record = source as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const path of paths) pick(record, path, out)
  const kept = keptUntrusted(record, paths)
  if (kept.length > 0) out._untrusted = kept
  // Items of a page carry their own `_untrusted`: keep theirs, relative to each item.
  if (Array.isArray(record.items) && Array.isArray(out.items)) {
    const below = paths.filter((p) => p[0] === 'items' && p.length > 1).map((p) => p.slice(1))
    out.items = (out.items as Record<string, unknown>[]).map((item, i) => {
      const original = (record.items as unknown[])[i]
      if (original === null || typeof original !== 'object') return item
      const own = keptUntrusted(original as Record<string, unknown>, below)
      return own.length > 0 ? { ...item, _untrusted: own } : item
    })
  }
  return out
}

/** Apply a checked selection to a command's data. */
export function projectData(data: unknown, selection: FieldSelection): unknown {
  return projectObject(data, selection.paths)
}

/**
 * The `--fields` of one call (`raw` as the universal-flag scan read it), checked against everything the command
 * can print as `data` (with `--wait`, the job's result instead of its submission); undefined when none was asked
 * for. zod loads only when one was. A deprecated field the request names is said through `notice`.
 */
export async function requestedFields(
  raw: string | undefined,
  command: Declares,
  options: { waits?: boolean; notice?: (n: Notice) => void } = {},
): Promise<FieldSelection | undefined> {
  if (raw === undefined) return undefined
  const z = await loadZod()
  const schema = effectiveOutput(command, z, options)
  const selection = selectFields(raw, schema)
  if (schema && options.notice) for (const n of deprecatedNotices(selection, toJsonSchema(z, schema))) options.notice(n)
  return selection
}

/** A notice for every deprecated field a selection names (or reaches into), in the order of the schema. */
function deprecatedNotices(selection: FieldSelection, schema: Record<string, unknown>): Notice[] {
  const named = selection.paths.map((p) => p.join('.'))
  return deprecatedFields(schema)
    .filter((f) => named.some((n) => n === f.path || n.startsWith(`${f.path}.`)))
    .map((f) => deprecationNotice('field', f.path, f))
}
