import { readFileSync } from 'node:fs'
import { usageError, validationError } from '../errors/agent-error.js'
import { CONFORMANCE_REVISIONS, type ConformanceBaseline, type ConformanceRevision } from './conformance.js'

/** The shape a `--baseline` file must have, as the refusals say it. */
export const BASELINE_SHAPE =
  'a JSON object keyed by revision (2025-11-25, 2026-07-28), each an object of scenario name → non-empty reason string, e.g. {"2025-11-25": {"prompts-list": "serves no prompts"}}'

/**
 * Read `--baseline <file.json>`: the scenarios a server is expected to fail, per revision, each with its reason.
 * Per revision, never flat, because the two requirement sets hold different scenarios and a flat list would turn
 * every entry the other revision does not run into a stale one. A revision the file leaves out expects no failure.
 * A file that cannot be read is `E_USAGE` (the flag names a file that is not there); one of another shape is
 * `E_VALIDATION` naming the key at fault and the shape allowed.
 */
export function readConformanceBaseline(path: string): ConformanceBaseline {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    throw usageError(`--baseline: cannot read ${path} (${code})`, {
      param: '--baseline',
      path,
      got: code,
      fix: `name a readable JSON file: ${BASELINE_SHAPE}`,
    })
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw bad(path, `not JSON (${(error as Error).message})`, 'not JSON')
  }
  if (!isObject(parsed)) throw bad(path, 'not a JSON object', Array.isArray(parsed) ? 'array' : typeof parsed)
  const baseline: ConformanceBaseline = {}
  for (const [revision, entries] of Object.entries(parsed)) {
    if (!(CONFORMANCE_REVISIONS as readonly string[]).includes(revision))
      throw validationError(
        `--baseline ${path}: '${revision}' is not a revision the suite is run at`,
        [...CONFORMANCE_REVISIONS],
        revision,
        { param: '--baseline', path },
      )
    if (!isObject(entries)) throw bad(path, `'${revision}' is not an object of scenario → reason`, typeof entries)
    const expected: Record<string, string> = {}
    for (const [scenario, reason] of Object.entries(entries)) {
      if (typeof reason !== 'string' || reason.trim() === '')
        throw bad(path, `'${revision}'.'${scenario}' has no reason (a non-empty string)`, reason)
      expected[scenario] = reason
    }
    baseline[revision as ConformanceRevision] = expected
  }
  return baseline
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function bad(path: string, what: string, got: unknown) {
  return validationError(`--baseline ${path}: ${what}`, BASELINE_SHAPE, got, { param: '--baseline', path })
}
