import type { Command } from '@oclif/core'
import type { ZodType } from 'zod'
import { type CommandKind, kindOf } from '../command-kind.js'
import type { ErrorCode } from '../errors/catalogue.js'
import { acceptedFields } from '../output/fields.js'
import { effectiveOutput } from '../schema/declared-output.js'
import {
  commandDeprecation,
  type DeprecatedField,
  type Deprecation,
  deprecatedFields,
  type OclifDeprecation,
  publishedSchema,
} from '../schema/deprecation.js'
import type { OutputSchema, ZodNamespace } from '../schema/output.js'
import { UNIVERSAL_FLAG_NAMES } from '../universal-flags/table.js'
import { type Risk, riskOf } from '../write/risk.js'
import { toJsonSchema } from './json-schema.js'
import { describeParams, type Param } from './params.js'

export { toJsonSchema }

/** One command as `reference` describes it. */
export type CommandDescription = {
  path: string
  /** What a call changes: `read`, `local` or `write` (see `COMMAND_KINDS`). */
  type: CommandKind
  summary: string
  description: string
  params: Param[]
  output_schema: Record<string, unknown>
  /** For an async command: the schema of the job's result, as `job result` returns it. */
  result_schema: Record<string, unknown> | null
  schema_version: string
  errors: string[]
  examples: string[]
  stream: boolean
  raw: boolean
  async: boolean
  /**
   * The dotted paths `--fields` accepts (`a.*`: anything under `a`; `*`: any path, the output is untyped) and, on a
   * list, the item fields it also accepts bare (`id` for `items.id`).
   */
  fields: { paths: string[]; item_shorthand: string[] }
  /** On a paginated command: a cursor is bound to its query, so the filters must be repeated with `--cursor`. */
  pagination: { cursor_param: '--cursor'; repeat_filters: true; order: 'keyset' } | null
  /**
   * What the command declares about its effects, for MCP annotations: a write that deletes or overwrites
   * (`destructive`, true unless declared otherwise), a call safe to repeat (`idempotent`), a call that reaches an
   * upstream (`open_world`).
   */
  hints?: { destructive: boolean; idempotent: boolean; open_world: boolean }
  /** On a write: what it does to the world (`static risk`, else the strictest reading; see `RISK_ACTIONS`). */
  risk?: Risk
  /** Present only on a deprecated command (`static state = 'deprecated'` with `deprecationOptions`). */
  deprecated?: Deprecation
  /** Present only when the output schema marks fields deprecated (`deprecatedField()`). */
  deprecated_fields?: DeprecatedField[]
}

/** Codes any command can raise, whatever it declares (`E_CONFIG`: a bad setting, an unsupported Node). */
export const UNIVERSAL_ERRORS: readonly ErrorCode[] = [
  'E_USAGE',
  'E_VALIDATION',
  'E_CONFIG',
  'E_INTERNAL',
  'E_INTERRUPTED',
]
/**
 * Codes every write command can raise: the flow's own, plus the write-safety machinery failing closed (an unsafe
 * confirm secret is `E_CONFIG`, universal already; an unusable ledger `E_IO`, a lock held too long `E_TIMEOUT`).
 */
export const WRITE_ERRORS: readonly ErrorCode[] = ['E_CONFIRMATION_REQUIRED', 'E_CONFLICT', 'E_IO', 'E_TIMEOUT']

/** The universal flags: described once at the top of `reference`, not per command. */
export { UNIVERSAL_FLAG_NAMES }

type Statics = {
  id: string
  summary?: string
  description?: string
  examples?: Array<string | { command: string; description?: string }>
  flags?: Record<string, object>
  baseFlags?: Record<string, object>
  args?: Record<string, object>
  kind?: unknown
  raw?: boolean
  stream?: boolean
  async?: boolean
  schemaVersion?: string
  errorCodes?: readonly string[]
  output?: OutputSchema
  destructive?: boolean
  idempotent?: boolean
  openWorld?: boolean
  risk?: unknown
  state?: string
  deprecationOptions?: OclifDeprecation
}

function outputOf(c: Statics, z: ZodNamespace): ZodType | undefined {
  return effectiveOutput({ kind: kindOf(c), async: Boolean(c.async), output: c.output }, z)
}

function schemaOf(c: Statics, z: ZodNamespace): Record<string, unknown> {
  const schema = outputOf(c, z)
  return schema ? toJsonSchema(z, schema) : {}
}

/** oclif's placeholder for the tool's bin in examples; `reference` replaces it with the running tool's. */
export const BIN_TEMPLATE = '<%= config.bin %>'

function renderExample(example: string | { command: string }, bin: string): string {
  const text = typeof example === 'string' ? example : example.command
  return text.replaceAll(BIN_TEMPLATE, bin)
}

/**
 * Describe a loaded command class. Runs at build time (baked into the manifest, so `reference` never loads
 * zod or the commands) and as a fallback when a tool ships without a manifest.
 */
export function describeCommand(cmd: Command.Class | Statics, bin: string, z: ZodNamespace): CommandDescription {
  const c = cmd as unknown as Statics
  const kind = kindOf(c)
  const declared = [...(c.errorCodes ?? [])]
  const errors = [...new Set([...UNIVERSAL_ERRORS, ...(kind === 'write' ? WRITE_ERRORS : []), ...declared])].sort()
  const path = c.id.replaceAll(':', ' ')
  const examples = (c.examples ?? []).map((e) => renderExample(e, bin))
  // Deprecations are read from the framework's own mark; what is published holds only standard keywords.
  const rawOutput = schemaOf(c, z)
  const outputSchema = publishedSchema(rawOutput)
  const deprecated = commandDeprecation(c)
  const deprecatedOut = deprecatedFields(rawOutput)
  const risk = riskOf(c, kind, z)
  return {
    path,
    type: kind,
    summary: c.summary ?? '',
    description: c.description ?? c.summary ?? '',
    params: describeParams(
      { ...(c.baseFlags ?? {}), ...(c.flags ?? {}) } as never,
      (c.args ?? {}) as never,
      UNIVERSAL_FLAG_NAMES,
    ),
    output_schema: outputSchema,
    result_schema: c.async && c.output ? publishedSchema(toJsonSchema(z, c.output(z))) : null,
    schema_version: c.schemaVersion ?? '1.0',
    errors,
    examples: examples.length > 0 ? examples : [`${bin} ${path}`],
    stream: Boolean(c.stream),
    raw: Boolean(c.raw),
    async: Boolean(c.async),
    fields: acceptedFields(outputOf(c, z)),
    pagination:
      c.flags && 'cursor' in c.flags ? { cursor_param: '--cursor', repeat_filters: true, order: 'keyset' } : null,
    hints: {
      // A declared risk is the one source: only a write that merely creates is not destructive.
      destructive: kind === 'write' && (c.risk !== undefined ? risk?.action !== 'create' : c.destructive !== false),
      idempotent: Boolean(c.idempotent),
      open_world: Boolean(c.openWorld),
    },
    ...(risk ? { risk } : {}),
    ...(deprecated ? { deprecated } : {}),
    ...(deprecatedOut.length > 0 ? { deprecated_fields: deprecatedOut } : {}),
  }
}
