import type { Interfaces } from '@oclif/core'
import { CLIError } from '@oclif/core/errors'
import { AgentError, isAgentError, usageError, validationError } from '../errors/agent-error.js'
import { suggest } from '../errors/suggest.js'
import { isSensitiveKey } from '../output/redact-keys.js'
import { registerSecret } from '../output/redact-secrets.js'
import { REDACTED } from '../output/redact-shapes.js'

type AnyFlag = Interfaces.Flag<unknown> & { options?: readonly string[] }
type AnyArg = Interfaces.Arg<unknown> & { options?: readonly string[] }
type AnyInput = { flags?: Record<string, unknown>; args?: Record<string, unknown>; [key: string]: unknown }

/**
 * oclif checks `options` before any custom parse and its error keeps neither the flag nor the value, so we take
 * the enum check over: the definitions handed to the parser have no `options`, and each parse is wrapped so that
 * every bad value becomes `E_VALIDATION` with `allowed` and `got`. The command's own statics keep `options` for
 * help and `reference`.
 */
export function prepareInput<T extends AnyInput>(input: T): T {
  const flags: Record<string, unknown> = {}
  for (const [name, raw] of Object.entries(input.flags ?? {})) flags[name] = wrap(`--${name}`, raw as AnyFlag)
  const args: Record<string, unknown> = {}
  for (const [name, raw] of Object.entries(input.args ?? {})) args[name] = wrap(name, raw as AnyArg)
  return { ...input, flags, args }
}

function wrap<D extends AnyFlag | AnyArg>(label: string, def: D): D {
  if ((def as { type?: string }).type === 'boolean') return def
  const options = def.options
  const inner = def.parse as ((input: string, ctx: unknown, def: unknown) => Promise<unknown>) | undefined
  // The value of a flag that names a secret (`--password`, `--api-key`) is registered with the redactor and
  // never echoed in an error, not even as `got`.
  const secret = isSensitiveKey(label.replace(/^--/, ''))
  const parse = async (value: string, ctx: unknown, self: unknown) => {
    if (secret) registerSecret(value)
    const got = secret ? REDACTED : value
    if (options && !options.includes(value)) {
      throw validationError(`${label} must be one of: ${options.join(', ')} (got: '${got}')`, [...options], got, {
        param: label,
      })
    }
    if (!inner) return value
    try {
      return await inner(value, ctx, self)
    } catch (error) {
      if (isAgentError(error)) {
        error.details.param ??= label
        if (secret) {
          if ('got' in error.details) error.details.got = REDACTED
          if (value) error.message = error.message.split(value).join(REDACTED)
        }
        if (!error.message.startsWith(label)) error.message = `${label}: ${error.message}`
        throw error
      }
      const reason = secret ? 'invalid value' : error instanceof Error ? cleanMessage(error.message) : String(error)
      throw validationError(`${label}: ${reason}`, null, got, { param: label })
    }
  }
  const { options: _dropped, ...rest } = def
  return { ...rest, parse } as D
}

/** `--name=value` → `--name`. */
function flagName(token: string): string {
  const eq = token.indexOf('=')
  return eq === -1 ? token : token.slice(0, eq)
}

/** Strip oclif's decoration (help pointer, ANSI) from a message. */
export function cleanMessage(message: string): string {
  return message
    .replace(/\u001b\[[0-9;]*m/g, '')
    .replace(/\n?See more help with --help/g, '')
    .replace(/^Parsing --[\w-]+ \n\t/, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim()
}

type ParseInfo = {
  input: { flags: Record<string, AnyFlag>; args: Record<string, AnyArg> }
  output: { flags: Record<string, unknown> }
}

/**
 * Turn anything the parser threw into an {@link AgentError}: structure first (the error's class and fields),
 * the message only as the human text.
 */
export function mapParseError(error: unknown, declared: { flags: Record<string, unknown> }): AgentError {
  if (isAgentError(error)) {
    // oclif prefixes messages of errors thrown in a flag's parse; ours carry their own clean text.
    error.message = cleanMessage(error.message)
    return error
  }
  const flagNames = Object.keys(declared.flags).map((name) => `--${name}`)
  if (error instanceof CLIError && 'flags' in error && Array.isArray(error.flags)) {
    // `--api-key=sk-…`: the name is what was wrong; the value is never echoed (message, got, suggestions).
    const got = [...new Set((error.flags as string[]).map(flagName))]
    // One shape everywhere (as for commands): the names meant, closest first, for every unknown flag together.
    const suggestions = [...new Set(got.flatMap((flag) => suggest(flag, flagNames)))]
    const first = suggest(got[0] ?? '', flagNames)
    const hint = first.length > 0 ? ` Did you mean ${first.join(' or ')}?` : ''
    return usageError(`Unknown flag${got.length === 1 ? '' : 's'}: ${got.join(', ')}.${hint}`, {
      got: got.length === 1 ? got[0] : got,
      allowed: flagNames.sort(),
      suggestions,
    })
  }
  if (error instanceof CLIError && 'args' in error && Array.isArray(error.args)) {
    const args = error.args as Array<string | { name?: string }>
    if (args.every((a) => typeof a === 'string')) {
      return usageError(`Unexpected argument${args.length === 1 ? '' : 's'}: ${args.join(', ')}`, { unexpected: args })
    }
    const missing = args.map((a) => (typeof a === 'string' ? a : (a.name ?? '?')))
    return usageError(`Missing required argument${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`, { missing })
  }
  if (error instanceof CLIError) {
    const parse = (error as { parse?: ParseInfo }).parse
    const details: Record<string, unknown> = {}
    if (parse?.input?.flags && parse.output?.flags) {
      const missing = Object.entries(parse.input.flags)
        .filter(([name, def]) => def.required && parse.output.flags[name] === undefined)
        .map(([name]) => `--${name}`)
      if (missing.length > 0) {
        details.missing = missing
        return usageError(`Missing required flag${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`, details)
      }
    }
    return usageError(cleanMessage(error.message), details)
  }
  return new AgentError('E_INTERNAL', 'argument parsing failed', { cause: error })
}
