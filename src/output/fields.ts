import { validationError } from '../errors/agent-error.js'

/** A parsed `--fields` value: dotted paths, each split into segments. */
export type FieldPaths = string[][]

/** Parse `a,b.c` into paths; empty segments are a usage mistake. */
export function parseFields(raw: string): FieldPaths {
  const parts = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
  if (parts.length === 0)
    throw validationError('--fields needs at least one field name', 'a,b.c', raw, { param: '--fields' })
  return parts.map((part) => part.split('.'))
}

/** Where `--fields` applies: the data itself, or each element of `data.items` for a page. */
export type FieldTarget = 'data' | 'items'

/**
 * Check requested paths against the valid ones. A path is valid when it is listed, or lies under a listed path
 * that is open (a record or an untyped value, marked by a trailing `.*`).
 */
export function checkFields(paths: FieldPaths, valid: readonly string[]): void {
  const exact = new Set(valid.filter((v) => !v.endsWith('.*')))
  const open = valid.filter((v) => v.endsWith('.*')).map((v) => v.slice(0, -2))
  const unknown = paths
    .map((path) => path.join('.'))
    .filter((name) => !exact.has(name) && !open.some((prefix) => name.startsWith(`${prefix}.`)))
  if (unknown.length === 0) return
  const allowed = [...exact].sort()
  throw validationError(
    `Unknown field${unknown.length === 1 ? '' : 's'} in --fields: ${unknown.join(', ')}. Valid fields: ${allowed.join(', ')}`,
    allowed,
    unknown.length === 1 ? unknown[0] : unknown,
    { param: '--fields' },
  )
}

function pick(source: unknown, path: readonly string[], target: Record<string, unknown>): void {
  if (source === null || typeof source !== 'object' || path.length === 0) return
  const [head, ...rest] = path as [string, ...string[]]
  if (!Object.hasOwn(source, head)) return
  const value = (source as Record<string, unknown>)[head]
  if (rest.length === 0) {
    target[head] = value
    return
  }
  if (Array.isArray(value)) {
    const existing = Array.isArray(target[head]) ? (target[head] as Record<string, unknown>[]) : value.map(() => ({}))
    for (const [i, element] of value.entries()) pick(element, rest, existing[i] ?? {})
    target[head] = existing
    return
  }
  const child = (target[head] as Record<string, unknown> | undefined) ?? {}
  pick(value, rest, child)
  target[head] = child
}

/** Keep only the requested paths of one object; `_untrusted` always survives so its promise is kept. */
export function projectObject(source: unknown, paths: FieldPaths): unknown {
  if (source === null || typeof source !== 'object' || Array.isArray(source)) return source
  const out: Record<string, unknown> = {}
  for (const path of paths) pick(source, path, out)
  const untrusted = (source as Record<string, unknown>)._untrusted
  if (Array.isArray(untrusted)) {
    const kept = untrusted.filter(
      (p) => typeof p === 'string' && paths.some((path) => p === path.join('.') || p.startsWith(`${path.join('.')}.`)),
    )
    if (kept.length > 0) out._untrusted = kept
  }
  return out
}

/** Apply `--fields` to a command's data. */
export function projectData(data: unknown, paths: FieldPaths, target: FieldTarget): unknown {
  if (target === 'items' && data && typeof data === 'object' && Array.isArray((data as { items?: unknown }).items)) {
    const page = data as { items: unknown[] }
    return { ...page, items: page.items.map((item) => projectObject(item, paths)) }
  }
  return projectObject(data, paths)
}
