import { byCodePoint } from '../output/compare.js'
import { type Deprecation, flagDeprecation, type OclifDeprecation } from '../schema/deprecation.js'

/** How a flag or argument is described in `reference` (spec 002 §11). */
export type Param = {
  name: string
  kind: 'flag' | 'arg'
  type: 'boolean' | 'string' | 'integer' | 'enum'
  required: boolean
  multiple: boolean
  default: unknown
  options: string[] | null
  description: string
  env: string | null
  char: string | null
  minimum?: number
  maximum?: number
  /** Present only on a deprecated flag: what replaces it and when it goes. */
  deprecated?: Deprecation
}

type FlagLike = {
  type?: string
  options?: readonly string[]
  required?: boolean
  multiple?: boolean
  default?: unknown
  description?: string
  summary?: string
  env?: string
  char?: string
  hidden?: boolean
  valueType?: string
  min?: number
  max?: number
  deprecated?: OclifDeprecation | false
}

function valueType(def: FlagLike): Param['type'] {
  if (def.type === 'boolean') return 'boolean'
  if (def.options && def.options.length > 0) return 'enum'
  if (def.valueType === 'integer') return 'integer'
  return 'string'
}

function staticDefault(value: unknown): unknown {
  return typeof value === 'function' || value === undefined ? null : value
}

/** Describe one flag or argument definition (live or cached by oclif). */
export function describeParam(name: string, kind: Param['kind'], def: FlagLike): Param {
  const type = valueType(def)
  const param: Param = {
    name,
    kind,
    type,
    required: Boolean(def.required),
    multiple: Boolean(def.multiple),
    default: type === 'boolean' && def.default === undefined ? false : staticDefault(def.default),
    options: def.options ? [...def.options] : null,
    description: def.description ?? def.summary ?? '',
    env: def.env ?? null,
    char: def.char ?? null,
  }
  if (typeof def.min === 'number') param.minimum = def.min
  if (typeof def.max === 'number') param.maximum = def.max
  const deprecated = kind === 'flag' ? flagDeprecation(name, def) : undefined
  if (deprecated) param.deprecated = deprecated
  return param
}

/** Describe a command's own flags and arguments (universal flags are listed once, at the top of `reference`). */
export function describeParams(
  flags: Record<string, FlagLike>,
  args: Record<string, FlagLike>,
  skip: ReadonlySet<string>,
): Param[] {
  const out: Param[] = []
  for (const [name, def] of Object.entries(args)) if (!def.hidden) out.push(describeParam(name, 'arg', def))
  for (const [name, def] of Object.entries(flags).sort(([a], [b]) => byCodePoint(a, b))) {
    if (!def.hidden && !skip.has(name)) out.push(describeParam(name, 'flag', def))
  }
  return out
}
