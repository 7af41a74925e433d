import type { CommandDescription } from '../describe/command.js'
import { expandReference, isCompactReference } from '../describe/expand.js'
import type { Param } from '../describe/params.js'

/** One way the current `reference` breaks a client written against the previous one. */
export type CompatBreak = {
  kind: 'command' | 'flag' | 'output_field' | 'error_code'
  /** The command path, `--flag` of a command, dotted field of a command, or error code. */
  subject: string
  change: string
}

/** The parts of a `reference` the check reads (any version of it, so unknown keys are fine). */
export type ComparableReference = {
  version: string
  schema_version: string
  commands: CommandDescription[]
  error_codes: Record<string, { exit: number; retryable: boolean }>
}

const major = (v: string | undefined) => Number.parseInt(String(v ?? '0').split('.')[0] ?? '0', 10) || 0

function semverParts(v: string): number[] {
  return String(v)
    .split(/[.+-]/)
    .slice(0, 3)
    .map((p) => Number.parseInt(p, 10) || 0)
}

function atLeast(version: string, floor: string): boolean {
  const a = semverParts(version)
  const b = semverParts(floor)
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! > b[i]!
  return true
}

/** Removal is the end of a deprecation, not a break, once the tool reached the version the notice announced. */
function dueForRemoval(d: { removed_in: string | null } | undefined, version: string): boolean {
  return Boolean(d?.removed_in && /^\d/.test(d.removed_in) && atLeast(version, d.removed_in))
}

type Field = { types: string; required: boolean }

/** Every field of a JSON Schema by dotted path (array items and union branches walked through, as `--fields`). */
export function schemaFields(schema: unknown): Map<string, Field> {
  const out = new Map<string, Field>()
  const walk = (node: unknown, path: string, required: boolean, depth: number) => {
    if (typeof node !== 'object' || node === null || depth > 32) return
    const s = node as Record<string, unknown>
    if (path) {
      const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : []
      const prior = out.get(path)
      const merged = new Set([...(prior ? prior.types.split('|').filter(Boolean) : []), ...types])
      out.set(path, { types: [...merged].sort().join('|'), required: (prior?.required ?? false) || required })
    }
    const req = new Set(Array.isArray(s.required) ? (s.required as string[]) : [])
    for (const [key, child] of Object.entries((s.properties ?? {}) as Record<string, unknown>))
      walk(child, path ? `${path}.${key}` : key, req.has(key), depth + 1)
    if (s.items) walk(s.items, path, false, depth + 1)
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(s[key])) for (const child of s[key] as unknown[]) walk(child, path, false, depth + 1)
  }
  walk(schema, '', false, 0)
  return out
}

function flagChanges(before: Param, after: Param | undefined): string[] {
  if (!after) return ['removed']
  const out: string[] = []
  if (before.type !== after.type) out.push(`type ${before.type} → ${after.type}`)
  if (!before.required && after.required) out.push('became required')
  if (before.multiple !== after.multiple) out.push(`multiple ${before.multiple} → ${after.multiple}`)
  if (JSON.stringify(before.default ?? null) !== JSON.stringify(after.default ?? null))
    out.push(`default ${JSON.stringify(before.default)} → ${JSON.stringify(after.default)}`)
  const gone = (before.options ?? []).filter((o) => !(after.options ?? before.options ?? []).includes(o))
  if (after.options && gone.length > 0) out.push(`values removed: ${gone.join(', ')}`)
  return out
}

function commandBreaks(before: CommandDescription, after: CommandDescription, version: string): CompatBreak[] {
  const out: CompatBreak[] = []
  const path = before.path
  const add = (kind: CompatBreak['kind'], subject: string, change: string) => out.push({ kind, subject, change })
  // A major bump of the command's own schema_version is how it announces a break of its output and flags.
  if (major(after.schema_version) > major(before.schema_version)) return out
  if (before.type !== after.type) add('command', path, `type ${before.type} → ${after.type}`)
  for (const key of ['stream', 'raw', 'async'] as const)
    if (before[key] !== after[key]) add('command', path, `${key} ${before[key]} → ${after[key]}`)
  const label = (p: Param) => (p.kind === 'arg' ? `<${p.name}>` : `--${p.name}`)
  const now = new Map(after.params.map((p) => [`${p.kind}:${p.name}`, p]))
  for (const p of before.params) {
    const next = now.get(`${p.kind}:${p.name}`)
    if (!next && dueForRemoval(p.deprecated, version)) continue
    for (const change of flagChanges(p, next)) add('flag', `${path} ${label(p)}`, change)
  }
  const old = new Set(before.params.map((p) => `${p.kind}:${p.name}`))
  for (const p of after.params)
    if (p.required && !old.has(`${p.kind}:${p.name}`)) add('flag', `${path} ${label(p)}`, 'added as required')
  const fieldsBefore = schemaFields(before.output_schema)
  const fieldsAfter = schemaFields(after.output_schema)
  const deprecatedBefore = new Map((before.deprecated_fields ?? []).map((f) => [f.path, f]))
  for (const [field, f] of fieldsBefore) {
    const next = fieldsAfter.get(field)
    if (!next) {
      if (!dueForRemoval(deprecatedBefore.get(field), after.schema_version))
        add('output_field', `${path} ${field}`, 'removed')
      continue
    }
    if (f.types && next.types !== f.types) add('output_field', `${path} ${field}`, `type ${f.types} → ${next.types}`)
    if (f.required && !next.required) add('output_field', `${path} ${field}`, 'no longer always present')
  }
  return out
}

/**
 * What changed between two `reference` documents in a way that breaks a client of the previous one (seed 004:
 * add-only within a generation; seed 002 §14): a command, flag, output field or error code removed or changed in
 * meaning. A command whose `schema_version` major went up may change its flags and output; a top-level
 * `schema_version` major bump allows anything. Removing a deprecated command, flag or field is not a break once
 * the version its deprecation named is reached.
 */
export function compatBreaks(previous: ComparableReference, current: ComparableReference): CompatBreak[] {
  if (major(current.schema_version) > major(previous.schema_version)) return []
  const out: CompatBreak[] = []
  const now = new Map(current.commands.map((c) => [c.path, c]))
  for (const before of previous.commands) {
    const after = now.get(before.path)
    if (!after) {
      if (!dueForRemoval(before.deprecated, current.version))
        out.push({ kind: 'command', subject: before.path, change: 'removed' })
      continue
    }
    out.push(...commandBreaks(before, after, current.version))
  }
  for (const [code, e] of Object.entries(previous.error_codes)) {
    const next = current.error_codes[code]
    if (!next) out.push({ kind: 'error_code', subject: code, change: 'removed' })
    else {
      if (next.exit !== e.exit) out.push({ kind: 'error_code', subject: code, change: `exit ${e.exit} → ${next.exit}` })
      if (next.retryable !== e.retryable)
        out.push({ kind: 'error_code', subject: code, change: `retryable ${e.retryable} → ${next.retryable}` })
    }
  }
  return out
}

/** Read a saved `reference` (full or `--compact`): the envelope `tool reference` printed, or its `data` alone. */
export function parseReference(text: string): ComparableReference {
  const value = JSON.parse(text) as { ok?: boolean; data?: unknown }
  const data = value && typeof value === 'object' && 'data' in value ? value.data : value
  const ref = (isCompactReference(data) ? expandReference(data) : data) as ComparableReference
  if (!ref || !Array.isArray(ref.commands) || typeof ref.error_codes !== 'object')
    throw new Error('not a reference document (expected the output of `<tool> reference`)')
  return ref
}
