import { isDeepStrictEqual } from 'node:util'
import { type CompactCommand, type CompactParam, compactCommand, compactParam } from './_compact-command.js'
import { compactReadiness } from './_compact-readiness.js'
import { isFrameworkRef } from './_reference-schema.js'
import { closeObjects } from './_schema-closed.js'
import { shareSchemas } from './_schema-defs.js'
import { unpatternFormats } from './_schema-formats.js'
import { untypeLiterals } from './_schema-literals.js'
import { type CommandReference, type CompactReference, TOOL_WIDE_KEYS } from './compact-reference.js'
import { DIALECT, expandReference, retryableByDefault } from './expand.js'
import type { Reference } from './reference.js'

export type { CommandReference, CompactReference } from './compact-reference.js'

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

/**
 * The dry-run preview every write adds to its declared output (`anyOf: [declared, preview]`, or the preview alone),
 * when every write in the document has that shape: written once, as `dry_run_schema`.
 */
function dryRunPreview(commands: readonly CompactCommand[], schemas: readonly Schema[]): Schema | undefined {
  let preview: Schema | undefined
  for (const [i, c] of commands.entries()) {
    if (c.type !== 'write' || c.verbatim) continue
    const s = schemas[i]
    if (!s) return undefined
    const branches = Object.keys(s).length === 1 && Array.isArray(s.anyOf) && s.anyOf.length === 2 ? s.anyOf : undefined
    preview ??= (branches ? branches[1] : s) as Schema
    if (!isDeepStrictEqual(s, preview) && !isDeepStrictEqual(branches?.[1], preview)) return undefined
  }
  return preview
}

type Shorthands = { closed: boolean; literals: boolean; formats: boolean }

/** The per-schema shorthands to try, in order: the first that gives the document back exactly is used. */
const SHORTHANDS: readonly Shorthands[] = [true, false].flatMap((formats) =>
  [
    { closed: true, literals: true },
    { closed: false, literals: true },
    { closed: true, literals: false },
    { closed: false, literals: false },
  ].map((s) => ({ ...s, formats })),
)

function build(ref: Reference, { closed, literals, formats }: Shorthands): CompactReference {
  const commands = ref.commands.map((c) => compactCommand(c, ref.tool))
  const outputs = commands.map((c) =>
    c.output_schema && !c.verbatim && !isFrameworkRef(c.output_schema) ? undialect(c.output_schema) : undefined,
  )
  const preview = dryRunPreview(commands, outputs as Schema[])
  const slots: Array<{ command: CompactCommand; key: 'output_schema' | 'result_schema'; schema: Schema }> = []
  for (const [i, command] of commands.entries()) {
    if (command.verbatim) continue
    const output = outputs[i]
    if (output && preview && command.type === 'write') {
      if (isDeepStrictEqual(output, preview)) delete command.output_schema
      else slots.push({ command, key: 'output_schema', schema: (output.anyOf as Schema[])[0]! })
    } else if (output) slots.push({ command, key: 'output_schema', schema: output })
    if (command.result_schema && typeof command.result_schema === 'object')
      slots.push({ command, key: 'result_schema', schema: undialect(command.result_schema) })
  }
  const untype = (s: Schema) => {
    const typed = literals ? (untypeLiterals(s) as Schema) : s
    return formats ? (unpatternFormats(typed) as Schema) : typed
  }
  const prepared = [...slots.map((s) => s.schema), ...(preview ? [preview] : [])].map((s) =>
    untype(closed ? (closeObjects(s) as Schema) : s),
  )
  const shared = shareSchemas(prepared)
  slots.forEach(({ command, key }, i) => {
    command[key] = shared.schemas[i] as Schema
  })
  const param_defs = shareParams(commands)
  const { global_flags, commands: _, error_codes, release_readiness, ...rest } = ref
  return {
    compact: true,
    ...rest,
    release_readiness: compactReadiness(release_readiness),
    schema_dialect: DIALECT,
    closed_objects: closed,
    implied_literal_types: literals,
    implied_formats: formats,
    global_flags: global_flags.map(compactParam),
    error_codes: Object.fromEntries(
      Object.entries(error_codes).map(([code, e]) => [
        code,
        e.retryable === retryableByDefault(e.exit) ? { exit: e.exit, description: e.description } : e,
      ]),
    ),
    param_defs,
    commands,
    ...(preview ? { dry_run_schema: shared.schemas[slots.length] as Schema } : {}),
    $defs: shared.defs,
  }
}

/** Whether `compact` expands to exactly `ref` (an expansion that throws does not). */
function lossless(compact: CompactReference, ref: Reference): boolean {
  try {
    return isDeepStrictEqual(expandReference(structuredClone(compact)), ref)
  } catch {
    return false
  }
}

/**
 * The compact form of a full `reference` document. Checked: when the shorthand would lose anything in this
 * document, it is built without it.
 */
export function compactReference(ref: Reference): CompactReference {
  for (const shorthands of SHORTHANDS.slice(0, -1)) {
    const compact = build(ref, shorthands)
    if (lossless(compact, ref)) return compact
  }
  return build(ref, SHORTHANDS.at(-1)!)
}

/**
 * `reference <command path…>`: the compact form of a reference built for those paths, without its tool-wide
 * sections (an agent that read SKILL.md holds them); `full` is the call that prints everything.
 */
export function commandReference(ref: Reference, full: string): CommandReference {
  const compact: Record<string, unknown> = { ...compactReference(ref) }
  for (const key of TOOL_WIDE_KEYS) delete compact[key]
  return { ...(compact as Omit<CompactReference, (typeof TOOL_WIDE_KEYS)[number]>), full_reference: full }
}
