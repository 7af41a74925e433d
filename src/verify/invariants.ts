import type { Catalogue } from '../errors/catalogue.js'
import { idDepth, leadingWords, longestMatch } from '../route/match.js'
import { envelopeViolations } from '../testing/envelope.js'
import type { Ref, RefCommand } from './reference-types.js'

/** The command an argv runs, by the longest matching path in `reference`. */
export function commandFor(ref: Ref, args: readonly string[]): RefCommand | undefined {
  const byId = new Map(ref.commands.map((c) => [c.path.replaceAll(' ', ':'), c]))
  return longestMatch(leadingWords(args), (id) => byId.get(id), idDepth(byId.keys()))?.found
}

/** The target's own error table, as a catalogue. */
export function catalogueOf(ref: Ref): Catalogue {
  return {
    entries: Object.fromEntries(Object.entries(ref.error_codes).map(([k, v]) => [k, { ...v, description: '' }])),
    extensions: [],
    lookup: (code: string) =>
      Object.hasOwn(ref.error_codes, code) ? { ...ref.error_codes[code]!, description: '' } : undefined,
  }
}

function typed(line: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(line) as Record<string, unknown>
    return typeof v.type === 'string' ? v : undefined
  } catch {
    return undefined
  }
}

/**
 * What is wrong with one JSON-format stdout: a stream command's (or a dynamic stream's) NDJSON lines, each with
 * `ok`, `schema_version`, `type`, ending in a summary or an error line whose exit agrees with the table; or else
 * exactly one envelope.
 */
export function jsonViolations(
  stdout: string,
  code: number | null,
  ref: Ref,
  command: RefCommand | undefined,
): string[] {
  const lines = stdout.trimEnd().split('\n')
  if (command?.stream || (lines.length > 1 && lines.every((l) => typed(l)))) {
    const parsed = lines.map(typed)
    const bad = parsed.filter((l) => !l || typeof l.ok !== 'boolean' || typeof l.schema_version !== 'string')
    if (bad.length) return [`${bad.length} NDJSON line(s) without ok, schema_version, type`]
    const last = parsed.at(-1)!
    if (last.type === 'error') {
      const error = last.error as { code?: string; retryable?: boolean } | undefined
      const entry = error?.code ? ref.error_codes[error.code] : undefined
      if (!entry || entry.exit !== code || entry.retryable !== error?.retryable)
        return [`error line ${error?.code} with exit ${code} disagrees with the table`]
      return []
    }
    return last.type === 'summary' && code === 0 ? [] : [`the stream ends with ${String(last.type)} and exit ${code}`]
  }
  return envelopeViolations(stdout, code, catalogueOf(ref)).map((v) => `${v.rule}: ${v.evidence}`)
}
