import type { z as Z, ZodType } from 'zod'

/** The zod namespace, handed to schema thunks so command modules never import zod at start-up. */
export type ZodNamespace = typeof Z

/**
 * A command's output schema, written as a function of `z`. zod costs as much to load as @oclif/core itself, so
 * schemas are built only when something needs them: `reference`, `--fields`, or output validation in tests.
 */
export type OutputSchema<T extends ZodType = ZodType> = (z: ZodNamespace) => T

/** Declare an output schema with its type kept: `static output = output((z) => z.object({ … }))`. */
export function output<T extends ZodType>(build: (z: ZodNamespace) => T): OutputSchema<T> {
  return build
}

/** The data type an output schema describes. */
export type OutputOf<S> = S extends OutputSchema<infer T> ? Z.infer<T> : never

let loaded: Promise<ZodNamespace> | undefined

/** Load zod once, on first need. */
export function loadZod(): Promise<ZodNamespace> {
  loaded ??= import('zod').then((m) => m.z)
  return loaded
}

type Def = {
  type: string
  shape?: Record<string, ZodType>
  innerType?: ZodType
  element?: ZodType
  options?: ZodType[]
  in?: ZodType
  out?: ZodType
}

function defOf(schema: ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def
}

function unwrap(schema: ZodType): ZodType {
  let current = schema
  for (let i = 0; i < 16; i++) {
    const def = defOf(current)
    if (
      (def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'readonly') &&
      def.innerType
    )
      current = def.innerType
    else if (def.type === 'pipe' && def.in) current = def.in
    else break
  }
  return current
}

/** The `items` element schema when `schema` describes a page (`{items: [...]}`), else undefined. */
export function pageItemSchema(schema: ZodType): ZodType | undefined {
  const def = defOf(unwrap(schema))
  const items = def.type === 'object' ? def.shape?.items : undefined
  if (!items) return undefined
  const inner = defOf(unwrap(items))
  return inner.type === 'array' ? inner.element : undefined
}

/**
 * Every dotted path `--fields` may name in values of `schema`. A record, an untyped value or a union that is not
 * all objects is open below its path, marked `path.*`.
 */
export function fieldPaths(schema: ZodType, prefix = '', depth = 0, out: string[] = []): string[] {
  const node = unwrap(schema)
  const def = defOf(node)
  if (depth > 8) return out
  if (def.type === 'object' && def.shape) {
    for (const [key, child] of Object.entries(def.shape)) {
      if (key === '_untrusted') continue
      const path = prefix ? `${prefix}.${key}` : key
      out.push(path)
      fieldPaths(child, path, depth + 1, out)
    }
  } else if (def.type === 'array' && def.element && prefix) {
    fieldPaths(def.element, prefix, depth + 1, out)
  } else if (def.type === 'union' && def.options && prefix) {
    for (const option of def.options) fieldPaths(option, prefix, depth + 1, out)
  } else if ((def.type === 'record' || def.type === 'unknown' || def.type === 'any') && prefix) {
    out.push(`${prefix}.*`)
  }
  return [...new Set(out)]
}
