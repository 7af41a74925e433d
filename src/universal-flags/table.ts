/** Output formats (spec 002 §2). */
export const FORMATS = ['json', 'text', 'raw'] as const

/**
 * The universal flags, the one table: oclif's flag definitions (`GLOBAL_FLAGS`), the argv scan and normalisation
 * (`src/universal-flags/globals.ts`), the boot's route look-up, `reference`'s list and the MCP arguments are all derived from it.
 * Plain data without oclif, so the boot file reads it without evaluating a flag builder. `mcp`: `server` for a flag
 * that is the MCP server's business (a call always answers one JSON envelope: a client may not pass it), or the
 * flag's description as an MCP argument.
 */
export const UNIVERSAL_FLAGS = {
  format: {
    takes: 'value',
    options: FORMATS,
    mcp: 'server',
    description:
      'Output format: json (default, the machine contract), text (for people), raw (commands that emit bytes).',
  },
  json: { takes: 'switch', mcp: 'server', description: 'Alias of --format json.' },
  fields: {
    takes: 'value',
    helpValue: 'a,b.c',
    description:
      'Return only these dotted paths of data; on a list, paths of the page (items.id, next_cursor) or of each item (id).',
    mcp: {
      description: 'Return only these fields of data (comma-separated dotted paths; on lists, fields of each item).',
    },
  },
  compact: {
    takes: 'switch',
    mcp: 'server',
    description: 'Print JSON on one line (the default off a terminal); reference returns its compact, lossless form.',
  },
  pretty: { takes: 'switch', mcp: 'server', description: 'Print JSON indented (the default on a terminal).' },
  quiet: { takes: 'switch', mcp: 'server', description: 'Silence progress and notes on stderr; errors still print.' },
  'no-input': {
    takes: 'switch',
    description:
      'Never prompt: a question becomes an E_USAGE error naming the flag that answers it. Implied when stdin is not a terminal.',
  },
} as const

/** The name of a universal flag, without dashes. */
export type UniversalFlag = keyof typeof UNIVERSAL_FLAGS

/** The names of the universal flags (`format`, `no-input`…). */
export const UNIVERSAL_FLAG_NAMES: ReadonlySet<string> = new Set(Object.keys(UNIVERSAL_FLAGS))

const tokens = (takes: 'value' | 'switch') =>
  new Set(
    Object.entries(UNIVERSAL_FLAGS)
      .filter(([, f]) => f.takes === takes)
      .map(([name]) => `--${name}`),
  )
/** `--format`, `--fields`: the universal flags that take a value (`--x v` or `--x=v`). */
export const UNIVERSAL_VALUE_TOKENS: ReadonlySet<string> = tokens('value')
/** The universal switches (`--json`, `--compact`, `--pretty`, …). */
export const UNIVERSAL_SWITCH_TOKENS: ReadonlySet<string> = tokens('switch')

/** Whether one argv token is a universal flag (a value flag's value is the next token unless written inline). */
export function isUniversalToken(token: string): boolean {
  return UNIVERSAL_SWITCH_TOKENS.has(token) || UNIVERSAL_VALUE_TOKENS.has(token.split('=')[0]!)
}
