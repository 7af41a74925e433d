/*
 * The `--fields` paths of a command, derived from its published JSON Schema the way `acceptedFields` derives them
 * from the zod schema. The compact `reference` leaves a command's `fields` out when this derivation gives them
 * back exactly (checked per command when compacting), so a disagreement costs bytes, never information.
 */

import { matches, OPEN } from '../output/field-paths.js'

type Schema = Record<string, unknown>

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)

function branches(schema: unknown): Schema[] {
  if (!isObject(schema)) return []
  return Array.isArray(schema.anyOf) ? schema.anyOf.flatMap(branches) : [schema]
}

function paths(schema: unknown, prefix: string, depth: number, out: string[]): void {
  if (!isObject(schema) || depth > 8) return
  const here = (p: string) => (prefix ? `${prefix}.${p}` : p)
  if (isObject(schema.properties)) {
    for (const [key, child] of Object.entries(schema.properties)) {
      if (key === '_untrusted') continue
      out.push(here(key))
      paths(child, here(key), depth + 1, out)
    }
  } else if (schema.type === 'array' && schema.items !== undefined) paths(schema.items, prefix, depth + 1, out)
  else if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf))
    for (const option of (schema.anyOf ?? schema.oneOf) as unknown[]) paths(option, prefix, depth + 1, out)
  else if (Array.isArray(schema.allOf)) for (const part of schema.allOf) paths(part, prefix, depth + 1, out)
  else if (schema.type === 'object' || Object.keys(schema).filter((k) => k !== '$schema').length === 0)
    out.push(here(OPEN))
}

function schemaPaths(schema: unknown): string[] {
  const out: string[] = []
  paths(schema, '', 0, out)
  return [...new Set(out)]
}

function pageItems(schema: unknown): unknown[] {
  const out: unknown[] = []
  for (const branch of branches(schema)) {
    const items = isObject(branch.properties) ? branch.properties.items : undefined
    for (const option of branches(items))
      if (option.type === 'array' && option.items !== undefined) out.push(option.items)
  }
  return out
}

/** The `fields` of a command whose output schema is `schema` (`{}`: untyped, any path). */
export function fieldsOfSchema(schema: Schema): { paths: string[]; item_shorthand: string[] } {
  const all = schemaPaths(schema)
  const shorthand = pageItems(schema).flatMap((item) => schemaPaths(item))
  return { paths: all, item_shorthand: [...new Set(shorthand)].filter((p) => !matches(p, all)) }
}
