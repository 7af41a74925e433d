import type { Interfaces } from '@oclif/core'
import { usageError } from '../errors/agent-error.js'
import type { Notice } from '../output/envelope.js'
import { type OclifDeprecation, usageNotices } from '../schema/deprecation.js'
import type { Format } from '../universal-flags/globals.js'
import { mapParseError, prepareInput } from './_parse.js'

/*
 * The parse of one call, shared by the oclif path (`AgentCommand.parse`) and any runner that parses without
 * oclif's `Command`: the same prepared definitions, the same error mapping, the same notices and format check.
 * Inputs are plain data (a command class is one; so is a generated flag table), the parser proper is passed in.
 */

// biome-ignore lint/suspicious/noExplicitAny: mirrors oclif's own FlagOutput/ArgOutput, which are Record<string, any>
type Loose = Record<string, any>

/** What a command declares about its input: a command class, or anything shaped like one. */
export type ParseSource = {
  flags?: Record<string, unknown> | undefined
  baseFlags?: Record<string, unknown> | undefined
  args?: Record<string, unknown> | undefined
  strict?: boolean | undefined
  '--'?: boolean | undefined
}

/** What one parse produced: oclif's parser output. */
export type Parsed = Interfaces.ParserOutput<Loose, Loose, Loose>

/** The parser proper (oclif's `Command.parse`, or `@oclif/core/parser`'s `parse`), given prepared definitions. */
export type Parser = (input: Interfaces.Input<Loose, Loose, Loose>, argv: string[]) => Promise<Parsed>

/** Parse `argv` against `source`: the enum checks taken over, every failure `E_USAGE`/`E_VALIDATION` with `allowed`/`got`. */
export async function parseWith(source: ParseSource, argv: string[], parser: Parser): Promise<Parsed> {
  const { flags, input } = preparedOf(source)
  try {
    return await parser({ ...input, baseFlags: {}, enableJsonFlag: false } as never, argv)
  } catch (error) {
    throw mapParseError(error, { flags })
  }
}

type Prepared = { flags: Record<string, unknown>; input: ReturnType<typeof prepareInput> }

/**
 * The prepared definitions of each source, kept while its declarations are the same objects: a process that runs
 * many calls (an MCP server running reads in its own process) wraps a command's flags once, not per call. They
 * hold no call's data (a wrapped parse registers the value it is given, at the call), and what the parser writes
 * on them is each definition's own name.
 */
const prepared = new WeakMap<object, Prepared & { of: readonly unknown[] }>()

function preparedOf(source: ParseSource): Prepared {
  const of = [source.flags, source.baseFlags, source.args, source.strict, source['--']]
  const known = prepared.get(source)
  if (known?.of.every((v, i) => v === of[i])) return known
  const flags = { ...(source.baseFlags ?? {}), ...(source.flags ?? {}) }
  const input = prepareInput({ flags, args: source.args ?? {}, strict: source.strict ?? true, '--': source['--'] })
  prepared.set(source, { flags, input, of })
  return { flags, input }
}

/** One parse per source for the life of a call: a command may call `parse()` as often as it likes. */
export class ParseMemo {
  private cached: { source: object; result: Parsed } | undefined

  /** The last successful parse, if any (what a page's cursor binds). */
  get result(): Parsed | undefined {
    return this.cached?.result
  }

  /** The memoised parse of `source`; a failure is not remembered (it is thrown again, mapped, next time). */
  async parse(source: object & ParseSource, argv: string[], parser: Parser): Promise<Parsed> {
    if (this.cached?.source === source) return this.cached.result
    const result = await parseWith(source, argv, parser)
    this.cached = { source, result }
    return result
  }
}

/** The command, as the checks after a parse see it. */
export type UsageSubject = ParseSource & {
  id: string
  state?: string
  deprecationOptions?: OclifDeprecation
  raw?: boolean
}

/**
 * What a parsed call says in `meta.notices` (a deprecated command, or a deprecated flag the caller wrote; oclif's
 * own warning is stderr only).
 */
export function callNotices(command: UsageSubject, parsed: Parsed): Notice[] {
  const given = parsed.raw.flatMap((r) => (r.type === 'flag' ? [r.flag] : []))
  return usageNotices(command, { ...command.baseFlags, ...command.flags } as never, given)
}

/** `--format raw` only for a command that emits bytes: anything else is `E_USAGE` before any work. */
export function checkFormat(command: UsageSubject, id: string | undefined, format: Format): void {
  if (format === 'raw' && !command.raw) {
    throw usageError(`${id ?? 'this command'} has no raw output; use --format json or --format text`, {
      allowed: ['json', 'text'],
      got: 'raw',
    })
  }
}
