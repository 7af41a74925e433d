import type { ZodType } from 'zod'
import { byCodePoint } from '../output/compare.js'
import type { Notice } from '../output/envelope.js'

/**
 * How `reference`, `--help`, SKILL.md and `meta.notices[]` describe something deprecated: what to use instead and
 * the version it goes away in (a command's or flag's: the tool version; an output field's: the command's
 * `schema_version` whose major removes it). Either may be unknown (null); it still works until then.
 */
export type Deprecation = { message: string; replaced_by: string | null; removed_in: string | null }

/** A deprecated output field as `reference` lists it: its dotted path in `data`. */
export type DeprecatedField = Deprecation & { path: string }

/** oclif's own deprecation markers: `deprecated` on a flag, `deprecationOptions` with `state: 'deprecated'`. */
export type OclifDeprecation = true | { to?: string; version?: string | number; message?: string }

/** What an author passes to mark an output field deprecated. */
export type FieldDeprecationOptions = { replacedBy?: string; removedIn?: string; message?: string }

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

const MARK = 'x-deprecation'

/**
 * Mark an output field deprecated: `environment: deprecatedField(z.string(), { replacedBy: 'env', removedIn: '2.0' })`.
 * Its JSON Schema carries `deprecated: true`, and `reference` lists it under the command's `deprecated_fields`.
 */
export function deprecatedField<T extends ZodType>(schema: T, options: FieldDeprecationOptions = {}): T {
  const mark = {
    replaced_by: options.replacedBy ?? null,
    removed_in: options.removedIn ?? null,
    ...(options.message ? { message: options.message } : {}),
  }
  return schema.meta({ deprecated: true, [MARK]: mark }) as T
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
