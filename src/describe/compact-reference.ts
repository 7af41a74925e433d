import type { CompactCommand, CompactParam } from './_compact-command.js'
import type { CompactReadiness } from './_compact-readiness.js'
import type { Reference } from './reference.js'

/**
 * `reference --compact`: the same information as {@link Reference} in a fraction of the bytes. Universal flags
 * are listed once (as in the full document), defaults and derivable keys are left out of each command and
 * parameter, a parameter several commands share is written once under `param_defs` (named by their index in
 * `params`), every subschema that occurs more than once is written once under `$defs` and referred to with
 * `{"$ref": "#/$defs/<name>"}`, and a closed object schema whose properties are all required drops `required`
 * and `additionalProperties`. {@link expandReference} gives the full document back, exactly.
 */
export type CompactReference = Omit<Reference, 'global_flags' | 'commands' | 'error_codes' | 'release_readiness'> & {
  /** Marks the compact form: a client that needs the full one passes this document to `expandReference`. */
  compact: true
  /** The `$schema` every output schema carries unless it says `"$dialect": false`. */
  schema_dialect: string
  /** False when the closed-object shorthand is off in this document (some schema could not use it losslessly). */
  closed_objects: boolean
  /** False when the implied-literal-type shorthand is off in this document (see `untypeLiterals`). */
  implied_literal_types: boolean
  /** True when the `date-time` pattern is left out of the schemas (see `unpatternFormats`); absent in older documents. */
  implied_formats?: boolean
  /** `release_readiness` without the keys its level and statuses imply. */
  release_readiness: CompactReadiness
  /** The universal flags, once for every command. */
  global_flags: CompactParam[]
  /** `retryable` is left out when it is the default of its exit code (see `retryableByDefault`). */
  error_codes: Record<string, { exit: number; retryable?: boolean; description: string }>
  /** Parameters shared by several commands; a number in a command's `params` is an index here. */
  param_defs: CompactParam[]
  /** Every command, its parameters given as indexes into `param_defs` where shared. */
  commands: CompactCommand[]
  /**
   * The dry-run preview of every write (present when all writes share it): a write's `output_schema` is then only
   * its declared output, the full one `{"anyOf": [output_schema, dry_run_schema]}` (the preview alone when the
   * write declares none and leaves `output_schema` out).
   */
  dry_run_schema?: Record<string, unknown>
  /** JSON Schema definitions shared by the commands' schemas (`$ref: "#/$defs/…"`). */
  $defs: Record<string, unknown>
}

/** The tool-wide sections of a `reference` document: SKILL.md carries them, `reference --full` prints them. */
export const TOOL_WIDE_KEYS = [
  'description',
  'risk_tier',
  'release_readiness',
  'global_flags',
  'command_kinds',
  'exit_codes',
  'error_codes',
] as const

/**
 * `reference <command path…>`: only the named commands, in the compact form's language (lossless:
 * `expandReference` gives each command back in full), without the tool-wide sections ({@link TOOL_WIDE_KEYS});
 * `full_reference` is the command that prints them with the commands in full.
 */
export type CommandReference = Omit<CompactReference, (typeof TOOL_WIDE_KEYS)[number]> & {
  /** The call that returns the same commands in full, with the tool-wide sections. */
  full_reference: string
}
