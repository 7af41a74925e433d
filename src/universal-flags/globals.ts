import * as Flags from '@oclif/core/flags'
import { AgentError, validationError } from '../errors/agent-error.js'
import { FORMATS, isUniversalToken, UNIVERSAL_FLAGS, UNIVERSAL_VALUE_TOKENS, type UniversalFlag } from './table.js'

export { FORMATS }
/** One of {@link FORMATS}. */
export type Format = (typeof FORMATS)[number]

/** The universal flags as the framework reads them, before and independently of oclif's parse. */
export type Globals = {
  format: Format
  /** `--compact`: JSON on one line (the default off a terminal); `reference` returns its compact form. */
  compact: boolean
  /** `--pretty`: JSON indented even off a terminal (the default on one). */
  pretty: boolean
  quiet: boolean
  fields: string | undefined
  /** `--no-input`: nothing may prompt; a prompt is an error instead (also implied when stdin is not a TTY). */
  noInput: boolean
  /** A problem with the universal flags themselves, raised before any command runs. */
  error: AgentError | undefined
}

const HELP_GROUP = 'GLOBAL'
const U = UNIVERSAL_FLAGS

/** The universal flags every {@link AgentCommand} accepts, as oclif flags (from `UNIVERSAL_FLAGS`); tools never redefine them. */
export const GLOBAL_FLAGS = {
  format: Flags.option({ options: FORMATS, helpGroup: HELP_GROUP, description: U.format.description })(),
  json: Flags.boolean({ helpGroup: HELP_GROUP, description: U.json.description }),
  fields: Flags.string({ helpGroup: HELP_GROUP, helpValue: U.fields.helpValue, description: U.fields.description }),
  compact: Flags.boolean({ helpGroup: HELP_GROUP, description: U.compact.description }),
  pretty: Flags.boolean({ helpGroup: HELP_GROUP, description: U.pretty.description }),
  quiet: Flags.boolean({ helpGroup: HELP_GROUP, description: U.quiet.description }),
  'no-input': Flags.boolean({ helpGroup: HELP_GROUP, description: U['no-input'].description }),
} satisfies Record<UniversalFlag, unknown>

const VALUE_FLAGS = UNIVERSAL_VALUE_TOKENS
const isGlobal = isUniversalToken

/** Whether argv holds nothing but universal flags (`tool`, `tool --compact`): a call that names no command. */
export function onlyGlobals(argv: readonly string[]): boolean {
  return firstNonGlobal(argv) === undefined
}

/** The first token of argv that is not a universal flag (or its value), if any. */
export function firstNonGlobal(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (!isGlobal(token)) return token
    if (VALUE_FLAGS.has(token)) i++
  }
  return undefined
}

/**
 * Move universal flags written before the command (`tasks --format text list`) behind it, where oclif expects
 * them, and in front of any `--` so they stay flags.
 */
export function normalizeArgv(argv: readonly string[]): string[] {
  const leading: string[] = []
  let i = 0
  while (i < argv.length && isGlobal(argv[i]!)) {
    const token = argv[i]!
    leading.push(token)
    if (VALUE_FLAGS.has(token) && i + 1 < argv.length) leading.push(argv[++i]!)
    i++
  }
  if (leading.length === 0) return [...argv]
  const rest = argv.slice(i)
  const dashdash = rest.indexOf('--')
  return dashdash === -1 ? [...rest, ...leading] : [...rest.slice(0, dashdash), ...leading, ...rest.slice(dashdash)]
}

/**
 * Read the universal flags straight from argv so that even a call oclif cannot parse is answered in the format
 * asked for. `envFormat` is a person's default (`<BIN>_FORMAT`); an explicit flag wins.
 */
export function scanGlobals(argv: readonly string[], envFormat?: { name: string; value: string | undefined }): Globals {
  let flagFormat: string | undefined
  let json = false
  let compact = false
  let pretty = false
  let quiet = false
  let noInput = false
  let fields: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (token === '--') break
    const [name, inline] = token.includes('=')
      ? [token.slice(0, token.indexOf('=')), token.slice(token.indexOf('=') + 1)]
      : [token, undefined]
    if (name === '--format' || name === '--fields') {
      const value = inline ?? argv[i + 1]
      if (inline === undefined) i++
      if (name === '--format') flagFormat = value
      else fields = value
    } else if (token === '--json') json = true
    else if (token === '--compact') compact = true
    else if (token === '--pretty') pretty = true
    else if (token === '--quiet') quiet = true
    else if (token === '--no-input') noInput = true
  }
  let error: AgentError | undefined
  let format: Format = 'json'
  if (flagFormat !== undefined) {
    if ((FORMATS as readonly string[]).includes(flagFormat)) format = flagFormat as Format
    else
      error = validationError(
        `--format must be one of: ${FORMATS.join(', ')} (got: '${flagFormat}')`,
        [...FORMATS],
        flagFormat ?? null,
        { param: '--format' },
      )
    if (json && flagFormat !== 'json' && !error) {
      error = new AgentError('E_USAGE', `--json conflicts with --format ${flagFormat}; pass one of them`, {
        details: { got: ['--json', `--format ${flagFormat}`] },
      })
    }
  } else if (json) {
    format = 'json'
  } else if (envFormat?.value) {
    if ((FORMATS as readonly string[]).includes(envFormat.value)) format = envFormat.value as Format
    else {
      error = new AgentError(
        'E_CONFIG',
        `${envFormat.name} must be one of: ${FORMATS.join(', ')} (got: '${envFormat.value}')`,
        {
          details: {
            allowed: [...FORMATS],
            got: envFormat.value,
            env: envFormat.name,
            fix: `unset ${envFormat.name} or set it to json`,
          },
        },
      )
    }
  }
  if (compact && pretty && !error)
    error = new AgentError('E_USAGE', '--compact conflicts with --pretty; pass one of them', {
      details: { got: ['--compact', '--pretty'] },
    })
  // Errors about the format flags themselves are reported in JSON: which format was meant is unknown.
  if (error) format = 'json'
  return { format, compact, pretty, quiet, fields, noInput, error }
}
