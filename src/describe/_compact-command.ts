import { isDeepStrictEqual } from 'node:util'
import { UPSTREAM_ERRORS } from '../errors/catalogue.js'
import { byCodePoint } from '../output/compare.js'
import { type Deprecation, deprecatedFields, deprecationMessage } from '../schema/deprecation.js'
import { fieldsOfSchema } from './_json-fields.js'
import { isFrameworkRef, REFERENCE_OUTPUT_SCHEMA, referenceSchemaOf, referenceSchemaRef } from './_reference-schema.js'
import { type CommandDescription, UNIVERSAL_ERRORS, WRITE_ERRORS } from './command.js'
import type { Param } from './params.js'

/*
 * One command or parameter of the compact `reference`: every key whose value the expansion can derive (a
 * default, the summary as description, the universal error codes, the `--fields` paths of the output schema) is
 * left out. Compaction keeps a key whenever the derivation would not give its value back exactly.
 */

/** A parameter with its defaults left out (`kind` flag, `type` string, not required, no default…). */
export type CompactParam = Partial<Omit<Param, 'deprecated'>> & { name: string; deprecated?: Partial<Deprecation> }
/** A command with what can be derived left out; schemas may hold `$ref`s to the document's `$defs`. */
export type CompactCommand = Partial<Omit<CommandDescription, 'params' | 'errors' | 'deprecated'>> & {
  deprecated?: Partial<Deprecation>
  path: string
  params?: CompactParam[]
  /** The codes besides the ones every command (every write, every `open_world` command) raises. */
  errors?: string[]
  /** False on an `open_world` command that does not raise every code of `UPSTREAM_ERRORS`. */
  upstream_errors?: false
  /**
   * False when `examples` are written in full (some does not start with the tool's bin); otherwise an example is
   * written after `<bin> <path> ` (`""`: the command alone) unless it starts with `<bin> ` (another command's).
   */
  examples_relative?: false
  /** Written in full when the expansion cannot be trusted to rebuild it (say, a key this version does not know). */
  verbatim?: true
}

const PARAM_KEYS = ['name', 'kind', 'type', 'required', 'multiple', 'default', 'options', 'description', 'env', 'char']

function paramDefaults(p: Pick<Param, 'type'>): Omit<Param, 'name'> {
  return {
    kind: 'flag',
    type: p.type,
    required: false,
    multiple: false,
    default: p.type === 'boolean' ? false : null,
    options: null,
    description: '',
    env: null,
    char: null,
  }
}

/** A parameter's `type` when its compact form leaves it out: `enum` when it lists `options`, else `string`. */
function impliedType(p: Pick<CompactParam, 'options'>): Param['type'] {
  return Array.isArray(p.options) ? 'enum' : 'string'
}

/** A deprecation without its `message` when that is the one the framework writes for `subject`. */
function compactDeprecation(d: Deprecation, subject: string): Partial<Deprecation> {
  if (d.message !== deprecationMessage(subject, d.replaced_by, d.removed_in)) return d
  const { message: _, ...rest } = d
  return rest
}

function expandDeprecation(d: Partial<Deprecation>, subject: string): Deprecation {
  const replaced_by = d.replaced_by ?? null
  const removed_in = d.removed_in ?? null
  return { message: d.message ?? deprecationMessage(subject, replaced_by, removed_in), ...d, replaced_by, removed_in }
}

/** A parameter without its defaults. */
export function compactParam(p: Param): CompactParam {
  const defaults = paramDefaults(p) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(p)) {
    if (key === 'deprecated' && p.kind === 'flag')
      out[key] = compactDeprecation(value as Deprecation, `flag --${p.name}`)
    else if (key === 'type' ? value !== impliedType(p) : !(key in defaults) || !isDeepStrictEqual(value, defaults[key]))
      out[key] = value
  }
  return out as CompactParam
}

/** A parameter as `reference` describes it, its keys in their usual order. */
export function expandParam(c: CompactParam): Param {
  const full = { ...paramDefaults({ type: c.type ?? impliedType(c) }), ...c } as Record<string, unknown>
  if (c.deprecated && full.kind === 'flag') full.deprecated = expandDeprecation(c.deprecated, `flag --${c.name}`)
  const out: Record<string, unknown> = {}
  for (const key of PARAM_KEYS) out[key] = full[key]
  for (const [key, value] of Object.entries(full)) if (!(key in out)) out[key] = value
  return out as Param
}

/** The codes a command raises whatever it declares: every command's, a write's, an upstream caller's. */
function baseErrors(type: string, upstream: boolean): readonly string[] {
  return [...UNIVERSAL_ERRORS, ...(type === 'write' ? WRITE_ERRORS : []), ...(upstream ? UPSTREAM_ERRORS : [])]
}

const PAGINATION = { cursor_param: '--cursor', repeat_filters: true, order: 'keyset' } as const

/** What the expansion assumes of a command, given its path, type, schemas and params (async: a result schema). */
function derived(c: CommandDescription, tool: string): Partial<CommandDescription> {
  return {
    description: c.summary,
    result_schema: null,
    schema_version: '1.0',
    examples: [`${tool} ${c.path}`],
    stream: false,
    raw: false,
    async: c.result_schema !== null,
    fields: fieldsOfSchema(c.output_schema),
    pagination: c.params.some((p) => p.kind === 'flag' && p.name === 'cursor') ? PAGINATION : null,
    hints: { destructive: c.type === 'write', idempotent: false, open_world: false },
  }
}

const COMMAND_KEYS = [
  'path',
  'type',
  'summary',
  'description',
  'params',
  'output_schema',
  'result_schema',
  'schema_version',
  'errors',
  'examples',
  'stream',
  'raw',
  'async',
  'fields',
  'pagination',
  'hints',
] as const

/**
 * An example of the command at `path` as the compact form writes it: after `<bin> <path> `, or in full when it is
 * another command's (or would read as one).
 */
function relativeExample(example: string, tool: string, path: string): string {
  const command = `${tool} ${path}`
  if (example === command) return ''
  if (!example.startsWith(`${command} `)) return example
  const rest = example.slice(command.length + 1)
  return rest === '' || rest.startsWith(`${tool} `) ? example : rest
}

function absoluteExample(example: string, tool: string, path: string): string {
  if (example.startsWith(`${tool} `)) return example
  return example === '' ? `${tool} ${path}` : `${tool} ${path} ${example}`
}

/** Leave out of `c` what {@link expandCommand} derives; schemas are left as they are (shared by the caller). */
export function compactCommand(c: CommandDescription, tool: string): CompactCommand {
  const assumed = derived(c, tool) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  const openWorld = c.hints?.open_world === true
  const upstream = openWorld && UPSTREAM_ERRORS.every((e) => c.errors.includes(e))
  for (const [key, value] of Object.entries(c)) {
    if (key === 'type') {
      if (value !== 'read') out.type = value
    } else if (key === 'params') {
      if (c.params.length > 0) out.params = c.params.map(compactParam)
    } else if (key === 'errors') {
      const base = new Set(baseErrors(c.type, upstream))
      const extra = c.errors.filter((e) => !base.has(e))
      if (extra.length > 0) out.errors = extra
      if (openWorld && !upstream) out.upstream_errors = false
    } else if (key === 'examples') {
      if (isDeepStrictEqual(value, assumed.examples)) continue
      if (c.examples.every((e) => e.startsWith(`${tool} `)))
        out.examples = c.examples.map((e) => relativeExample(e, tool, c.path))
      else Object.assign(out, { examples: value, examples_relative: false })
    } else if (key === 'hints' && c.hints) {
      const defaults = assumed.hints as Record<string, boolean>
      const differs = Object.entries(c.hints).filter(([k, v]) => defaults[k] !== v)
      if (differs.length > 0) out.hints = Object.fromEntries(differs)
    } else if (key === 'output_schema') {
      if (isDeepStrictEqual(value, REFERENCE_OUTPUT_SCHEMA)) out.output_schema = { $ref: referenceSchemaRef() }
      else if (Object.keys(c.output_schema).length > 0) out.output_schema = value
    } else if (key === 'deprecated' && c.deprecated) {
      out.deprecated = compactDeprecation(c.deprecated, `command '${c.path}'`)
    } else if (key === 'deprecated_fields') {
      if (!isDeepStrictEqual(value, deprecatedFields(c.output_schema))) out.deprecated_fields = value
    } else if (!(key in assumed) || !isDeepStrictEqual(value, assumed[key])) out[key] = value
  }
  const compact = out as CompactCommand
  // The fallback that makes compaction lossless whatever a command holds: what would not come back exactly is
  // written as it is.
  return isDeepStrictEqual(expandCommand(compact, tool), c) ? compact : { ...c, verbatim: true }
}

/** A command as `reference` describes it, from its compact form (its schemas' `$ref`s already resolved). */
export function expandCommand(c: CompactCommand, tool: string): CommandDescription {
  if (c.verbatim) {
    const { verbatim: _, ...rest } = c
    return rest as CommandDescription
  }
  const { upstream_errors, examples_relative, ...given } = c
  const type = c.type ?? 'read'
  const params = (c.params ?? []).map(expandParam)
  const upstream = c.hints?.open_world === true && upstream_errors !== false
  const errors = [...new Set([...baseErrors(type, upstream), ...(c.errors ?? [])])].sort(byCodePoint)
  const output = isFrameworkRef(c.output_schema) ? referenceSchemaOf(c.output_schema.$ref) : c.output_schema
  const partial = {
    path: c.path,
    type,
    summary: c.summary ?? '',
    params,
    output_schema: output ?? {},
    result_schema: c.result_schema ?? null,
  } as CommandDescription
  const assumed = derived(partial, tool)
  const full: Record<string, unknown> = { ...assumed, ...given, ...partial, errors }
  full.hints = { ...assumed.hints, ...(c.hints ?? {}) }
  if (c.examples && examples_relative !== false) full.examples = c.examples.map((e) => absoluteExample(e, tool, c.path))
  if (c.deprecated) full.deprecated = expandDeprecation(c.deprecated, `command '${c.path}'`)
  if (!c.deprecated_fields) {
    const fields = deprecatedFields(partial.output_schema)
    if (fields.length > 0) full.deprecated_fields = fields
  }
  const out: Record<string, unknown> = {}
  for (const key of COMMAND_KEYS) out[key] = full[key]
  for (const [key, value] of Object.entries(full)) if (!(key in out)) out[key] = value
  return out as CommandDescription
}
