import type { ZodType } from 'zod'

type Def = {
  type: string
  shape?: Record<string, ZodType>
  innerType?: ZodType
  element?: ZodType
  options?: ZodType[]
  left?: ZodType
  right?: ZodType
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

/** The branches of a union (or the single schema), so a page hidden in a union is still found. */
function branches(schema: ZodType): ZodType[] {
  const node = unwrap(schema)
  const def = defOf(node)
  return def.type === 'union' && def.options ? def.options.flatMap(branches) : [node]
}

/** The `items` element schemas when `schema` describes a page (`{items: [...]}`) in any branch, else empty. */
export function pageItemSchemas(schema: ZodType): ZodType[] {
  const out: ZodType[] = []
  for (const branch of branches(schema)) {
    const def = defOf(branch)
    const items = def.type === 'object' ? def.shape?.items : undefined
    if (!items) continue
    const inner = defOf(unwrap(items))
    if (inner.type === 'array' && inner.element) out.push(inner.element)
  }
  return out
}

/** The marker of an open path: anything below `prefix.*` (or anything at all, for `*`) may exist. */
export const OPEN = '*'

/** Whether `path` is one of `valid`, or lies below one of its open paths. */
export function matches(path: string, valid: readonly string[]): boolean {
  return valid.some((v) =>
    v === OPEN
      ? true
      : v.endsWith(`.${OPEN}`)
        ? path.startsWith(v.slice(0, -1)) || path === v.slice(0, -2)
        : v === path,
  )
}

/**
 * Every dotted path a value of `schema` can have. A union contributes the paths of all its branches; a record or
 * an untyped value is open below its path (`path.*`; `*` when the whole value is untyped).
 */
export function schemaPaths(schema: ZodType, prefix = '', depth = 0, out: string[] = []): string[] {
  const node = unwrap(schema)
  const def = defOf(node)
  const here = (path: string) => (prefix ? `${prefix}.${path}` : path)
  if (depth > 8) return out
  if (def.type === 'object' && def.shape) {
    for (const [key, child] of Object.entries(def.shape)) {
      if (key === '_untrusted') continue
      out.push(here(key))
      schemaPaths(child, here(key), depth + 1, out)
    }
  } else if (def.type === 'array' && def.element) {
    schemaPaths(def.element, prefix, depth + 1, out)
  } else if (def.type === 'union' && def.options) {
    for (const option of def.options) schemaPaths(option, prefix, depth + 1, out)
  } else if (def.type === 'intersection' && def.left && def.right) {
    schemaPaths(def.left, prefix, depth + 1, out)
    schemaPaths(def.right, prefix, depth + 1, out)
  } else if (def.type === 'record' || def.type === 'unknown' || def.type === 'any') {
    out.push(here(OPEN))
  }
  return [...new Set(out)]
}
