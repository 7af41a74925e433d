/*
 * Shared parts of JSON Schemas, as `$defs` of the compact `reference` document: a subschema that occurs more than
 * once is written once under `$defs` and `{"$ref": "#/$defs/<name>"}` stands wherever it occurred. Only schema
 * positions are touched (a `properties` map's values, `items`, `anyOf` branches…), never the literal values of a
 * schema (`enum`, `default`, `required`), so the compact document is itself valid JSON Schema.
 */

type Json = unknown
type Schema = Record<string, Json>

/** Keys whose value is one subschema. */
const ONE = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
  'contentSchema',
])
/** Keys whose value is a list of subschemas. */
const LIST = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems'])
/** Keys whose value maps names to subschemas. */
const MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

const isObject = (v: Json): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Rebuild `schema` with every subschema (the root included) passed through `visit`, bottom-up. */
export function mapSchema(schema: Json, visit: (node: Schema) => Json): Json {
  if (!isObject(schema)) return schema
  const out: Schema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (ONE.has(key)) out[key] = mapSchema(value, visit)
    else if (LIST.has(key) && Array.isArray(value)) out[key] = value.map((v) => mapSchema(v, visit))
    else if (MAP.has(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSchema(v, visit)]))
    else out[key] = value
  }
  return visit(out)
}

const REF_PREFIX = '#/$defs/'

/** A name prefix no `$ref` of the input uses, so an original `$ref` is never taken for one of ours. */
function freePrefix(schemas: readonly Json[]): string {
  const refs: string[] = []
  for (const s of schemas)
    mapSchema(s, (node) => {
      if (typeof node.$ref === 'string') refs.push(node.$ref)
      return node
    })
  let prefix = ''
  while (refs.some((r) => r.startsWith(`${REF_PREFIX}${prefix}`))) prefix = `_${prefix}`
  return prefix
}

/** What {@link shareSchemas} returns: the schemas with shared parts replaced, and those parts. */
export type Shared = { schemas: Json[]; defs: Record<string, Json> }

/** A `$ref` costs about this much; a subschema shorter than it is never worth sharing. */
const MIN_SHARED = 24
/** What a `$ref` and a `$defs` entry's key cost, in bytes: `{"$ref":"#/$defs/12"}`, `"12":` and a comma. */
const REF_SIZE = 21
const DEF_KEY_SIZE = 6
/** Whether writing a subschema of `size` bytes once under `$defs` is shorter than writing it `count` times. */
const worthSharing = (count: number, size: number) =>
  count >= 2 && size >= MIN_SHARED && count * size > count * REF_SIZE + size + DEF_KEY_SIZE
/** The key of a placeholder for an interned subschema (no JSON Schema keyword starts with a NUL). */
const ID = '\u0000'

type Interned = { node: Schema; count: number; size: number }

/**
 * Write every subschema that occurs at least twice (and is long enough to be worth it) once, under `$defs`.
 * Subschemas are interned bottom-up, so a shared subschema may itself refer to smaller shared ones.
 */
export function shareSchemas(schemas: readonly Json[]): Shared {
  const prefix = freePrefix(schemas)
  const table: Interned[] = []
  const index = new Map<string, number>()
  const sizeOf = (node: Schema): number =>
    JSON.stringify(node).length +
    childIds(node).reduce((sum, id) => sum + table[id]!.size - JSON.stringify({ [ID]: id }).length, 0)
  const intern = (node: Schema): Schema => {
    const key = JSON.stringify(node)
    let id = index.get(key)
    if (id === undefined) {
      id = table.length
      index.set(key, id)
      table.push({ node, count: 0, size: sizeOf(node) })
    }
    table[id]!.count++
    return { [ID]: id }
  }
  const roots = schemas.map((s) => (isObject(s) ? ((mapSchema(s, intern) as Schema)[ID] as number) : s))
  const names = new Map<number, string>()
  const defs: Record<string, Json> = {}
  const build = (id: number, asDef: boolean): Json => {
    const entry = table[id]!
    if (!asDef && worthSharing(entry.count, entry.size)) {
      let name = names.get(id)
      if (!name) {
        name = `${prefix}${names.size}`
        names.set(id, name)
        defs[name] = build(id, true)
      }
      return { $ref: `${REF_PREFIX}${name}` }
    }
    return mapSchema(entry.node, (n) => (ID in n ? build(n[ID] as number, false) : n))
  }
  // The counts are taken before sharing, so a part that occurs only inside one shared part counts twice: such
  // a def ends up referred to once, and is inlined again below.
  const shared = roots.map((r, i) => (typeof r === 'number' && isObject(schemas[i]) ? build(r, false) : r))
  return renumber(extendShared(inlineSingles({ schemas: shared, defs })), prefix)
}

/** Name the defs that are left `0`, `1`, … in order (inlining left gaps, and a longer name costs every `$ref`). */
function renumber(input: Shared, prefix: string): Shared {
  const names = new Map(Object.keys(input.defs).map((name, i) => [name, `${prefix}${i}`]))
  const rename = (s: Json): Json =>
    mapSchema(s, (node) => {
      const name = refName(node, input.defs, false)
      return name ? { ...node, $ref: `${REF_PREFIX}${names.get(name)}` } : node
    })
  return {
    schemas: input.schemas.map(rename),
    defs: Object.fromEntries(Object.entries(input.defs).map(([name, d]) => [names.get(name)!, rename(d)])),
  }
}

/**
 * A subschema that is a shared one plus a few keys (the same type with its own `description`, say) becomes
 * `{"$ref": …, "description": …}`: 2020-12 applies a `$ref` beside other keywords, so the meaning is unchanged.
 */
function extendShared(input: Shared): Shared {
  const candidates = Object.entries(input.defs)
    .filter(([, d]) => isObject(d) && JSON.stringify(d).length >= MIN_SHARED)
    .map(([name, d]) => ({
      name,
      entries: Object.entries(d as Schema).map(([k, v]) => [k, JSON.stringify(v)] as const),
      size: JSON.stringify(d).length,
    }))
    .sort((a, b) => b.size - a.size)
  const extend =
    (self: string | undefined) =>
    (node: Schema): Json => {
      if (typeof node.$ref === 'string') return node
      const keys = Object.keys(node).length
      for (const c of candidates) {
        if (c.name === self || c.entries.length >= keys) continue
        if (!c.entries.every(([k, v]) => k in node && JSON.stringify(node[k]) === v)) continue
        const rest = Object.fromEntries(Object.entries(node).filter(([k]) => !c.entries.some(([ck]) => ck === k)))
        return { $ref: `${REF_PREFIX}${c.name}`, ...rest }
      }
      return node
    }
  const defs = Object.fromEntries(Object.entries(input.defs).map(([name, d]) => [name, mapSchema(d, extend(name))]))
  return { schemas: input.schemas.map((s) => mapSchema(s, extend(undefined))), defs }
}

function childIds(node: Schema): number[] {
  const ids: number[] = []
  mapSchema(node, (n) => {
    if (ID in n) ids.push(n[ID] as number)
    return n
  })
  return ids
}

function refName(node: Json, defs: Record<string, Json>, alone = true): string | undefined {
  if (!isObject(node) || typeof node.$ref !== 'string' || (alone && Object.keys(node).length !== 1)) return undefined
  if (!node.$ref.startsWith(REF_PREFIX)) return undefined
  const name = node.$ref.slice(REF_PREFIX.length)
  return Object.hasOwn(defs, name) ? name : undefined
}

/** Put back the defs referred to only once. */
function inlineSingles(input: Shared): Shared {
  const uses = new Map<string, number>()
  const count = (s: Json) =>
    mapSchema(s, (node) => {
      const name = refName(node, input.defs)
      if (name) uses.set(name, (uses.get(name) ?? 0) + 1)
      return node
    })
  for (const s of input.schemas) count(s)
  for (const d of Object.values(input.defs)) count(d)
  const single = (name: string) => (uses.get(name) ?? 0) < 2
  const inline = (s: Json): Json =>
    mapSchema(s, (node) => {
      const name = refName(node, input.defs)
      return name && single(name) ? inline(input.defs[name]) : node
    })
  const defs: Record<string, Json> = {}
  for (const [name, def] of Object.entries(input.defs)) if (!single(name)) defs[name] = inline(def)
  return { schemas: input.schemas.map(inline), defs }
}

/**
 * Replace every `$ref` to one of `defs` by the subschema it names (with the keys beside the `$ref` added),
 * recursively: the schema as it was.
 */
export function resolveSchema(schema: Json, defs: Record<string, Json>): Json {
  return mapSchema(schema, (node) => {
    const name = refName(node, defs, false)
    if (!name) return node
    const { $ref: _, ...rest } = node
    return { ...(resolveSchema(defs[name], defs) as Schema), ...rest }
  })
}
