import { type Catalogue, CORE_CATALOGUE } from '../errors/catalogue.js'

/** A broken promise of the machine contract, found in one run's output. */
export type ContractViolation = {
  /** The rule broken (`one_json_document`, `envelope_keys`, …). */
  rule: string
  /** What in the output broke it. */
  evidence: string
}

const SNAKE = /^_?[a-z][a-z0-9]*(_[a-z0-9]+)*$/

function keysOf(value: unknown, path: string, out: Array<[string, string]>, skipUnder: Set<string>): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) keysOf(v, `${path}[${i}]`, out, skipUnder)
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      out.push([key, `${path}.${key}`])
      if (!skipUnder.has(key)) keysOf(child, `${path}.${key}`, out, skipUnder)
    }
  }
}

/** JSON Schema's own keywords, where a document carries schemas (the compact `reference`'s shared `$defs`). */
const SCHEMA_KEYWORDS = new Set(['$defs', '$ref', '$schema', '$id'])

/** Key names under these members are data (schemas, maps keyed by ids or codes), not contract keys. */
const OPAQUE = new Set([
  'output_schema',
  'result_schema',
  'error_codes',
  'exit_codes',
  'suggestions',
  'properties',
  '$defs',
  'definitions',
])

/**
 * Check one run's stdout against the envelope rules: exactly one JSON document, keys in contract order,
 * `meta.duration_ms`, an object `error.details`, exit code and `retryable` from the catalogue, snake_case keys,
 * UTF-8 without BOM, no `\r\n`, no ANSI.
 */
export function envelopeViolations(
  stdout: string,
  exitCode: number | null,
  catalogue: Catalogue = CORE_CATALOGUE,
): ContractViolation[] {
  const v: ContractViolation[] = []
  if (stdout.charCodeAt(0) === 0xfeff) v.push({ rule: 'no_bom', evidence: 'stdout starts with a BOM' })
  if (stdout.includes('\r\n')) v.push({ rule: 'lf_only', evidence: 'stdout contains \\r\\n' })
  if (stdout.includes('\u001b[')) v.push({ rule: 'no_ansi', evidence: 'stdout contains an ANSI escape' })
  let doc: unknown
  try {
    doc = JSON.parse(stdout)
  } catch {
    v.push({
      rule: 'one_json_document',
      evidence: `stdout is not one JSON document: ${JSON.stringify(stdout.slice(0, 120))}`,
    })
    return v
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return [...v, { rule: 'envelope_object', evidence: 'stdout is not an object' }]
  const env = doc as Record<string, unknown>
  const keys = Object.keys(env)
  const expected =
    env.ok === true ? ['ok', 'schema_version', 'data', 'meta'] : ['ok', 'schema_version', 'error', 'meta']
  if (keys.join() !== expected.join())
    v.push({ rule: 'envelope_keys', evidence: `keys ${keys.join(',')}, expected ${expected.join(',')}` })
  if (typeof env.schema_version !== 'string')
    v.push({ rule: 'schema_version', evidence: 'schema_version is not a string' })
  const meta = env.meta as Record<string, unknown> | undefined
  if (!meta || typeof meta.duration_ms !== 'number')
    v.push({ rule: 'meta_duration', evidence: 'meta.duration_ms missing' })
  if (env.ok === true && exitCode !== 0) v.push({ rule: 'exit_matches_ok', evidence: `ok:true with exit ${exitCode}` })
  if (env.ok === false) {
    const error = env.error as Record<string, unknown> | undefined
    const errorKeys = error ? Object.keys(error).join() : ''
    if (errorKeys !== 'code,message,details,retryable')
      v.push({ rule: 'error_keys', evidence: `error keys ${errorKeys}` })
    if (!error?.details || typeof error.details !== 'object' || Array.isArray(error.details)) {
      v.push({ rule: 'error_details_object', evidence: 'error.details is not an object' })
    }
    const entry = typeof error?.code === 'string' ? catalogue.lookup(error.code) : undefined
    if (!entry) v.push({ rule: 'error_code_known', evidence: `code ${String(error?.code)} is not in the catalogue` })
    else {
      if (entry.exit !== exitCode)
        v.push({
          rule: 'exit_from_catalogue',
          evidence: `${String(error?.code)} exited ${exitCode}, table says ${entry.exit}`,
        })
      if (entry.retryable !== error?.retryable)
        v.push({
          rule: 'retryable_from_catalogue',
          evidence: `${String(error?.code)} retryable ${String(error?.retryable)}`,
        })
    }
  }
  const found: Array<[string, string]> = []
  keysOf(doc, '$', found, OPAQUE)
  for (const [key, path] of found)
    if (!SNAKE.test(key) && !/^\d+$/.test(key) && !SCHEMA_KEYWORDS.has(key))
      v.push({ rule: 'snake_case_keys', evidence: `${path}` })
  return v
}
