import { isDeepStrictEqual } from 'node:util'
import { type CompactCommand, type CompactParam, compactCommand, compactParam } from './_compact-command.js'
import { closeObjects } from './_schema-closed.js'
import { shareSchemas } from './_schema-defs.js'
import { DIALECT, expandReference } from './expand.js'
import type { Reference } from './reference.js'

/**
 * `reference --compact`: the same information as {@link Reference} in a fraction of the bytes. Universal flags
 * are listed once (as in the full document), defaults and derivable keys are left out of each command and
 * parameter, a parameter several commands share is written once under `param_defs` (named by their index in
 * `params`), every subschema that occurs more than once is written once under `$defs` and referred to with
 * `{"$ref": "#/$defs/<name>"}`, and a closed object schema whose properties are all required drops `required`
 * and `additionalProperties`. {@link expandReference} gives the full document back, exactly.
 */
export type CompactReference = Omit<Reference, 'global_flags' | 'commands' | 'error_codes'> & {
  /** Marks the compact form: a client that needs the full one passes this document to `expandReference`. */
  compact: true
  /** The `$schema` every output schema carries unless it says `"$dialect": false`. */
  schema_dialect: string
  /** False when the closed-object shorthand is off in this document (some schema could not use it losslessly). */
  closed_objects: boolean
  global_flags: CompactParam[]
  /** `retryable` is left out when false. */
  error_codes: Record<string, { exit: number; retryable?: boolean; description: string }>
  /** Parameters shared by several commands; a number in a command's `params` is an index here. */
  param_defs: CompactParam[]
  commands: CompactCommand[]
  $defs: Record<string, unknown>
}

type Schema = Record<string, unknown>

/**
 * A schema's `$schema` is left out when it is the document's dialect, and put back (first) on expansion; the rare
 * schema without it says so with `"$dialect": false`, so the two cannot be confused.
 */
function undialect(schema: Schema): Schema {
  if (schema.$schema !== DIALECT) return { ...schema, $dialect: false }
  const { $schema: _, ...rest } = schema
  return rest
}

/**
 * Parameters that occur (identically) in more than one command are written once, in `param_defs`, and named by
 * their index there. An index rather than the flag's name: a name like `api-key` is a key the redactor blanks.
 */
function shareParams(commands: CompactCommand[]): CompactParam[] {
  const counts = new Map<string, number>()
  for (const c of commands)
    for (const p of c.params ?? []) counts.set(JSON.stringify(p), (counts.get(JSON.stringify(p)) ?? 0) + 1)
  const index = new Map<string, number>()
  const defs: CompactParam[] = []
  for (const c of commands) {
    if (!c.params || c.verbatim) continue
    c.params = c.params.map((p) => {
      const key = JSON.stringify(p)
      if ((counts.get(key) ?? 0) < 2) return p
      let at = index.get(key)
      if (at === undefined) {
        at = defs.push(p) - 1
        index.set(key, at)
      }
      return at as unknown as CompactParam
    })
  }
  return defs
}

function build(ref: Reference, closed: boolean): CompactReference {
  const commands = ref.commands.map((c) => compactCommand(c, ref.tool))
  const slots: Array<{ command: CompactCommand; key: 'output_schema' | 'result_schema' }> = []
  for (const command of commands)
    for (const key of ['output_schema', 'result_schema'] as const)
      if (command[key] && typeof command[key] === 'object' && !command.verbatim) slots.push({ command, key })
  const prepared = slots.map(({ command, key }) => {
    const schema = undialect(command[key] as Schema)
    return closed ? closeObjects(schema) : schema
  })
  const shared = shareSchemas(prepared)
  slots.forEach(({ command, key }, i) => {
    command[key] = shared.schemas[i] as Schema
  })
  const param_defs = shareParams(commands)
  const { global_flags, commands: _, error_codes, ...rest } = ref
  return {
    compact: true,
    ...rest,
    schema_dialect: DIALECT,
    closed_objects: closed,
    global_flags: global_flags.map(compactParam),
    error_codes: Object.fromEntries(
      Object.entries(error_codes).map(([code, e]) => [
        code,
        e.retryable ? e : { exit: e.exit, description: e.description },
      ]),
    ),
    param_defs,
    commands,
    $defs: shared.defs,
  }
}

/**
 * The compact form of a full `reference` document. Checked: when the shorthand would lose anything in this
 * document, it is built without it.
 */
export function compactReference(ref: Reference): CompactReference {
  const compact = build(ref, true)
  return isDeepStrictEqual(expandReference(structuredClone(compact)), ref) ? compact : build(ref, false)
}
