import type { CommandDescription } from '../describe/command.js'
import type { Param } from '../describe/params.js'
import { AgentError } from '../errors/agent-error.js'
import { argName, MCP_GLOBALS } from './tools.js'

/** Arguments of a stream's MCP call that are the server's, not the command's. */
const STREAM_ARGS = new Set(['max_items'])

/**
 * The most bytes (UTF-8) the arguments of one call may take on the command line it becomes. Well under what
 * every OS takes (Linux: 128 KiB for one argument, about 2 MiB for all with the environment; macOS: 1 MiB; Windows:
 * 32,767 characters for the whole line), so a call is refused with `E_VALIDATION` before it could fail to start.
 * Content larger than this belongs in a file the command reads.
 */
export const MAX_ARGV_BYTES = process.platform === 'win32' ? 30_000 : 64 * 1024

function scalar(p: Param, value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return String(value)
  throw new AgentError('E_VALIDATION', `${argName(p.name)} must be a ${p.type} (got: ${JSON.stringify(value)})`, {
    details: { param: argName(p.name), allowed: p.options ?? [p.type], got: value ?? null },
  })
}

/** The parameters of a command by argument name, its own and the MCP globals: made once per list of parameters. */
const byArgName = new WeakMap<readonly Param[], Map<string, Param>>()

function paramsOf(params: readonly Param[]): Map<string, Param> {
  let map = byArgName.get(params)
  if (!map) {
    map = new Map([...params, ...MCP_GLOBALS].map((p) => [argName(p.name), p]))
    byArgName.set(params, map)
  }
  return map
}

/**
 * The CLI call an MCP call is: the command path, then its flags (`--name value`, `--name=value` for a value that
 * starts with `-`), then its positional arguments (behind `--` when one starts with `-`). An MCP tool call is
 * exactly this CLI invocation, so both surfaces answer with the same envelope. A name the tool's input schema does
 * not list is `E_USAGE` naming the allowed ones (passed on, `help` would print help text, not an envelope); all the
 * words together may take at most {@link MAX_ARGV_BYTES}, else `E_VALIDATION`.
 */
export function toArgv(
  c: Pick<CommandDescription, 'path' | 'params'> & { stream?: boolean },
  args: Record<string, unknown>,
): string[] {
  const params = paramsOf(c.params)
  const flags: string[] = []
  const positional: string[] = []
  const sizes = new Map<string, number>()
  for (const [key, value] of Object.entries(args)) {
    if ((c.stream && STREAM_ARGS.has(key)) || value === undefined) continue
    const p = params.get(key)
    if (!p)
      throw new AgentError('E_USAGE', `Unknown argument: ${JSON.stringify(key)}`, {
        details: { got: key, allowed: [...params.keys(), ...(c.stream ? STREAM_ARGS : [])] },
      })
    const values = Array.isArray(value) && p.multiple ? value : [value]
    const words: string[] = []
    if (p.kind === 'arg') for (const v of values) words.push(scalar(p, v))
    else if (p.type === 'boolean') {
      if (value === true) words.push(`--${p.name}`)
      else if (value !== false) words.push(`--${p.name}=${scalar(p, value)}`)
    } else
      for (const v of values) {
        const text = scalar(p, v)
        if (text.startsWith('-')) words.push(`--${p.name}=${text}`)
        else words.push(`--${p.name}`, text)
      }
    ;(p.kind === 'arg' ? positional : flags).push(...words)
    sizes.set(
      key,
      words.reduce((n, w) => n + Buffer.byteLength(w) + 1, 0),
    )
  }
  checkSize(sizes)
  const dashed = positional.some((v) => v.startsWith('-'))
  return [...c.path.split(' '), ...(dashed ? [...flags, '--', ...positional] : [...positional, ...flags])]
}

function checkSize(sizes: Map<string, number>): void {
  let total = 0
  let largest: [string, number] = ['', 0]
  for (const [key, n] of sizes) {
    total += n
    if (n > largest[1]) largest = [key, n]
  }
  if (total <= MAX_ARGV_BYTES) return
  throw new AgentError(
    'E_VALIDATION',
    `The arguments take ${total} bytes on the command line, over the limit of ${MAX_ARGV_BYTES} (largest: ${largest[0]}); pass large content in a file the command reads`,
    { details: { param: largest[0], max_bytes: MAX_ARGV_BYTES, got_bytes: total } },
  )
}
