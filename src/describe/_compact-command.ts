import { isDeepStrictEqual } from 'node:util'
import { byCodePoint } from '../compare.js'
import { fieldsOfSchema } from './_json-fields.js'
import { type CommandDescription, UNIVERSAL_ERRORS, WRITE_ERRORS } from './command.js'
import type { Param } from './params.js'

/*
 * One command or parameter of the compact `reference`: every key whose value the expansion can derive (a
 * default, the summary as description, the universal error codes, the `--fields` paths of the output schema) is
 * left out. Compaction keeps a key whenever the derivation would not give its value back exactly.
 */

/** A parameter with its defaults left out (`kind` flag, `type` string, not required, no default…). */
export type CompactParam = Partial<Param> & { name: string }
/** A command with what can be derived left out; schemas may hold `$ref`s to the document's `$defs`. */
export type CompactCommand = Partial<Omit<CommandDescription, 'params' | 'errors'>> & {
  path: string
  params?: CompactParam[]
  /** The codes besides the ones every command (and every write) raises. */
  errors?: string[]
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

/** A parameter without its defaults. */
export function compactParam(p: Param): CompactParam {
  const defaults = paramDefaults(p) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(p)) {
    if (key === 'type' ? value !== 'string' : !(key in defaults) || !isDeepStrictEqual(value, defaults[key]))
      out[key] = value
  }
  return out as CompactParam
}

/** A parameter as `reference` describes it, its keys in their usual order. */
export function expandParam(c: CompactParam): Param {
  const full = { ...paramDefaults({ type: c.type ?? 'string' }), ...c } as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key of PARAM_KEYS) out[key] = full[key]
  for (const [key, value] of Object.entries(full)) if (!(key in out)) out[key] = value
  return out as Param
}

function baseErrors(type: string): readonly string[] {
  return type === 'write' ? [...UNIVERSAL_ERRORS, ...WRITE_ERRORS] : UNIVERSAL_ERRORS
}

const PAGINATION = { cursor_param: '--cursor', repeat_filters: true, order: 'keyset' } as const

/** What the expansion assumes of a command, given its path, type, schema and params. */
function derived(c: CommandDescription, tool: string): Partial<CommandDescription> {
  return {
    description: c.summary,
    result_schema: null,
    schema_version: '1.0',
    examples: [`${tool} ${c.path}`],
    stream: false,
    raw: false,
    async: false,
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

/** Leave out of `c` what {@link expandCommand} derives; schemas are left as they are (shared by the caller). */
export function compactCommand(c: CommandDescription, tool: string): CompactCommand {
  const assumed = derived(c, tool) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(c)) {
    if (key === 'params') {
      if (c.params.length > 0) out.params = c.params.map(compactParam)
    } else if (key === 'errors') {
      const base = new Set(baseErrors(c.type))
      const extra = c.errors.filter((e) => !base.has(e))
      if (extra.length > 0) out.errors = extra
    } else if (key === 'hints' && c.hints) {
      const defaults = assumed.hints as Record<string, boolean>
      const differs = Object.entries(c.hints).filter(([k, v]) => defaults[k] !== v)
      if (differs.length > 0) out.hints = Object.fromEntries(differs)
    } else if (key === 'output_schema') {
      if (Object.keys(c.output_schema).length > 0) out.output_schema = value
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
  const type = c.type ?? 'read'
  const params = (c.params ?? []).map(expandParam)
  const errors = [...new Set([...baseErrors(type), ...(c.errors ?? [])])].sort(byCodePoint)
  const partial = {
    path: c.path,
    type,
    summary: c.summary ?? '',
    params,
    output_schema: c.output_schema ?? {},
  } as CommandDescription
  const assumed = derived(partial, tool)
  const full: Record<string, unknown> = { ...assumed, ...c, ...partial, errors }
  full.hints = { ...assumed.hints, ...(c.hints ?? {}) }
  const out: Record<string, unknown> = {}
  for (const key of COMMAND_KEYS) out[key] = full[key]
  for (const [key, value] of Object.entries(full)) if (!(key in out)) out[key] = value
  return out as CommandDescription
}
