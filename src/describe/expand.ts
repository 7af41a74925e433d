import { type CompactCommand, expandCommand, expandParam } from './_compact-command.js'
import { expandReadiness } from './_compact-readiness.js'
import { isFrameworkRef } from './_reference-schema.js'
import { openObjects } from './_schema-closed.js'
import { resolveSchema } from './_schema-defs.js'
import { repatternFormats } from './_schema-formats.js'
import { retypeLiterals } from './_schema-literals.js'
import type { CommandReference, CompactReference, TOOL_WIDE_KEYS } from './compact-reference.js'
import type { Reference } from './reference.js'

/** The JSON Schema dialect every output schema names; written once in the compact document. */
export const DIALECT = 'https://json-schema.org/draft/2020-12/schema'

/**
 * Whether an error code with this exit code is retryable unless its entry says otherwise: the exit codes whose
 * `exit_codes` advice is to retry (7 transient, 8 timeout, 130 interrupted), as every core code has it.
 */
export function retryableByDefault(exit: number): boolean {
  return exit === 7 || exit === 8 || exit === 130
}

/** Whether a `reference` document is the compact form (`reference --compact`, or `reference <command>`). */
export function isCompactReference(doc: unknown): doc is CompactReference {
  return typeof doc === 'object' && doc !== null && (doc as { compact?: unknown }).compact === true
}

/**
 * The full `reference` document from its compact form, exactly as `reference` prints it: every `$ref` to the
 * document's `$defs` resolved, every default and derived key put back. A full document is returned as it is, so
 * a consumer can pass whichever form it was given. The commands-only form (`reference <command>`) expands to its
 * commands in full, with none of the tool-wide sections it left out (and no `full_reference`).
 */
export function expandReference(doc: CompactReference | Reference): Reference
export function expandReference(doc: CommandReference): Omit<Reference, TOOL_WIDE[number]>
export function expandReference(doc: CompactReference | CommandReference | Reference): Partial<Reference> {
  if (!isCompactReference(doc)) return doc as Reference
  const {
    compact: _,
    schema_dialect,
    closed_objects,
    implied_literal_types,
    implied_formats,
    release_readiness,
    $defs,
    param_defs,
    global_flags,
    commands,
    error_codes,
    dry_run_schema,
    full_reference: __,
    ...rest
  } = doc as CompactReference & Partial<CommandReference>
  const schema = (s: unknown) => {
    const resolved = resolveSchema(s, $defs)
    const patterned = implied_formats ? repatternFormats(resolved) : resolved
    const typed = implied_literal_types ? retypeLiterals(patterned) : patterned
    return redialect((closed_objects ? openObjects(typed) : typed) as Record<string, unknown>, schema_dialect)
  }
  const expanded = commands.map((c) => {
    const resolved: CompactCommand = { ...c }
    if (c.params) resolved.params = c.params.map((p) => (typeof p === 'number' ? param_defs[p]! : p))
    if (!c.verbatim) {
      const output =
        dry_run_schema && c.type === 'write'
          ? c.output_schema
            ? { anyOf: [c.output_schema, dry_run_schema] }
            : dry_run_schema
          : c.output_schema
      if (output && !isFrameworkRef(output)) resolved.output_schema = schema(output)
      if (c.result_schema) resolved.result_schema = schema(c.result_schema)
    }
    return expandCommand(resolved, doc.tool)
  })
  const out: Record<string, unknown> = { ...rest, commands: expanded }
  // The commands-only form has no tool-wide sections: nothing to put back.
  if (release_readiness) out.release_readiness = expandReadiness(release_readiness)
  if (global_flags) out.global_flags = global_flags.map(expandParam)
  if (error_codes) {
    const errors: Reference['error_codes'] = {}
    for (const [code, e] of Object.entries(error_codes))
      errors[code] = { exit: e.exit, retryable: e.retryable ?? retryableByDefault(e.exit), description: e.description }
    out.error_codes = errors
  }
  // The full document's keys in their usual order.
  const ordered: Record<string, unknown> = {}
  for (const key of REFERENCE_KEYS) if (key in out) ordered[key] = out[key]
  return Object.assign(ordered, out) as Partial<Reference>
}

type TOOL_WIDE = typeof TOOL_WIDE_KEYS

const REFERENCE_KEYS: ReadonlyArray<keyof Reference> = [
  'tool',
  'version',
  'schema_version',
  'contract_version',
  'description',
  'risk_tier',
  'release_readiness',
  'global_flags',
  'command_kinds',
  'commands',
  'exit_codes',
  'error_codes',
]

/** Put back the `$schema` the compact form left out (see `undialect`). */
function redialect(schema: Record<string, unknown>, dialect: string = DIALECT): Record<string, unknown> {
  if (schema.$dialect !== false) return { $schema: dialect, ...schema }
  const { $dialect: _, ...rest } = schema
  return rest
}
