import type { ZodType } from 'zod'
import { byCodePoint } from '../output/compare.js'
import type { Notice } from '../output/envelope.js'

/**
 * How `reference`, `--help`, SKILL.md and `meta.notices[]` describe something deprecated: what to use instead and
 * the version it goes away in (a command's or flag's: the tool version; an output field's: the command's
 * `schema_version` whose major removes it). Either may be unknown (null); it still works until then.
 */
export type Deprecation = {
  /** What to tell the reader. */
  message: string
  /** What to use instead, or null. */
  replaced_by: string | null
  /** The version that removes it, or null. */
  removed_in: string | null
}

/** A deprecated output field as `reference` lists it: its dotted path in `data`. */
export type DeprecatedField = Deprecation & {
  /** The field's dotted path in `data`. */
  path: string
}

/** oclif's own deprecation markers: `deprecated` on a flag, `deprecationOptions` with `state: 'deprecated'`. */
export type OclifDeprecation = true | { to?: string; version?: string | number; message?: string }

/** What an author passes to mark an output field deprecated. */
export type FieldDeprecationOptions = {
  /** The field to read instead. */
  replacedBy?: string
  /** The `schema_version` whose major removes the field. */
  removedIn?: string
  /** A message of its own (default: derived from the rest). */
  message?: string
}

/** The message of a deprecation that declares none (the compact `reference` derives it back from the rest). */
export function deprecationMessage(subject: string, replacedBy: string | null, removedIn: string | null): string {
  return `${subject} is deprecated${removedIn ? ` and goes away in ${removedIn}` : ''}${replacedBy ? `; use ${replacedBy}` : ''}`
}

function describe(subject: string, opts: OclifDeprecation | undefined): Deprecation {
  const o = opts === true || opts === undefined ? {} : opts
  const removedIn = o.version === undefined ? null : String(o.version)
  const replacedBy = o.to ?? null
  const message = o.message ?? deprecationMessage(subject, replacedBy, removedIn)
  return { message, replaced_by: replacedBy, removed_in: removedIn }
}

/** The deprecation of a command class or its cached manifest entry (`static state = 'deprecated'`), if any. */
export function commandDeprecation(c: {
  id: string
  state?: string
  deprecationOptions?: OclifDeprecation
}): Deprecation | undefined {
  if (c.state !== 'deprecated') return undefined
  return describe(`command '${c.id.replaceAll(':', ' ')}'`, c.deprecationOptions)
}

/** The deprecation of a flag definition (`deprecated: { to, version }`), if any. */
export function flagDeprecation(name: string, def: { deprecated?: OclifDeprecation | false }): Deprecation | undefined {
  if (!def.deprecated) return undefined
  return describe(`flag --${name}`, def.deprecated)
}

/**
 * The structured deprecation (`replaced_by`, `removed_in`) on a field's JSON Schema, for the framework's own reading
 * (`reference`'s `deprecated_fields`, `--fields` notices). Never published: {@link publishedSchema} removes it, so
 * what validators and agents get holds only standard keywords.
 */
const MARK = 'x-deprecation'

/**
 * Mark an output field deprecated: `environment: deprecatedField(z.string(), { replacedBy: 'env', removedIn: '2.0' })`.
 * Its published JSON Schema carries the standard `deprecated: true` and says so in its `description` (what the
 * field was, then what to use instead and when it goes away); `reference` lists it, structured, under the command's
 * `deprecated_fields`.
 */
export function deprecatedField<T extends ZodType>(schema: T, options: FieldDeprecationOptions = {}): T {
  const mark = {
    replaced_by: options.replacedBy ?? null,
    removed_in: options.removedIn ?? null,
    ...(options.message ? { message: options.message } : {}),
  }
  const said =
    options.message ??
    `Deprecated${options.removedIn ? `: goes away in ${options.removedIn}` : ''}${options.replacedBy ? `; use ${options.replacedBy}` : ''}.`
  const description = schema.description ? `${schema.description} ${said}` : said
  return schema.meta({ deprecated: true, description, [MARK]: mark }) as T
}

/** Keys whose value is one subschema, a list of them, or a map of names to them (the positions a mark can be at). */
const ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames']
const LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems']
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']

/**
 * A JSON Schema as it is published (`reference`, MCP, schema files): without the framework's own deprecation mark,
 * so it compiles under a strict validator (Ajv `strict: true` refuses unknown keywords). Only schema positions are
 * walked: a property that happens to be named like the mark is kept.
 */
export function publishedSchema<T>(schema: T): T {
  const walk = (node: unknown): unknown => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return node
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (key === MARK) continue
      if (ONE.includes(key)) out[key] = walk(value)
      else if (LIST.includes(key) && Array.isArray(value)) out[key] = value.map(walk)
      else if (MAP.includes(key) && value && typeof value === 'object')
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
      else out[key] = value
    }
    return out
  }
  return walk(schema) as T
}

type JsonSchema = { [key: string]: unknown }

/** Every field a JSON Schema marks deprecated, by dotted path (arrays are walked through, as `--fields` does). */
export function deprecatedFields(schema: JsonSchema): DeprecatedField[] {
  const out = new Map<string, DeprecatedField>()
  const walk = (node: unknown, path: string[], depth: number) => {
    if (typeof node !== 'object' || node === null || depth > 32) return
    const s = node as JsonSchema
    if (s.deprecated === true && path.length > 0) {
      const mark = (s[MARK] ?? {}) as { replaced_by?: string | null; removed_in?: string | null; message?: string }
      const dotted = path.join('.')
      const d = describe(`field ${dotted}`, {
        ...(mark.replaced_by ? { to: mark.replaced_by } : {}),
        ...(mark.removed_in ? { version: mark.removed_in } : {}),
        ...(mark.message ? { message: mark.message } : {}),
      })
      out.set(dotted, { path: dotted, ...d })
    }
    for (const [key, child] of Object.entries((s.properties ?? {}) as Record<string, unknown>))
      walk(child, [...path, key], depth + 1)
    if (s.items) walk(s.items, path, depth + 1)
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(s[key])) for (const child of s[key] as unknown[]) walk(child, path, depth + 1)
  }
  walk(schema, [], 0)
  return [...out.values()].sort((a, b) => byCodePoint(a.path, b.path))
}

/** The `meta.notices[]` entry of a deprecated command, flag or output field that this call used. */
export function deprecationNotice(what: 'command' | 'flag' | 'field', name: string, d: Deprecation): Notice {
  return { type: 'deprecated', what, name, message: d.message, replaced_by: d.replaced_by, removed_in: d.removed_in }
}

/**
 * The notices for one call: the command itself when deprecated, and each deprecated flag the caller wrote
 * (a flag that only took its default is not the caller's use).
 */
export function usageNotices(
  command: { id: string; state?: string; deprecationOptions?: OclifDeprecation },
  flags: Record<string, { deprecated?: OclifDeprecation | false }>,
  given: Iterable<string>,
): Notice[] {
  const notices: Notice[] = []
  const cmd = commandDeprecation(command)
  if (cmd) notices.push(deprecationNotice('command', command.id.replaceAll(':', ' '), cmd))
  for (const name of new Set(given)) {
    const d = flags[name] ? flagDeprecation(name, flags[name]!) : undefined
    if (d) notices.push(deprecationNotice('flag', `--${name}`, d))
  }
  return notices
}
