import type { CommandDescription } from '../describe/command.js'
import type { Param } from '../describe/params.js'
import { AgentError } from '../errors/agent-error.js'
import { argName, MCP_GLOBALS } from './tools.js'

/** Arguments of a stream's MCP call that are the server's, not the command's. */
const STREAM_ARGS = new Set(['max_items'])

function scalar(p: Param, value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return String(value)
  throw new AgentError('E_VALIDATION', `${argName(p.name)} must be a ${p.type} (got: ${JSON.stringify(value)})`, {
    details: { param: argName(p.name), allowed: p.options ?? [p.type], got: value ?? null },
  })
}

/**
 * The CLI call an MCP call is: the command path, then its flags (`--name value`, `--name=value` for a value that
 * starts with `-`), then its positional arguments (behind `--` when one starts with `-`). An MCP tool call is
 * exactly this CLI invocation, so both surfaces answer with the same envelope. Unknown argument names are passed
 * as flags, so the command itself refuses them with the code the CLI gives.
 */
export function toArgv(
  c: Pick<CommandDescription, 'path' | 'params'> & { stream?: boolean },
  args: Record<string, unknown>,
): string[] {
  const params = new Map([...c.params, ...MCP_GLOBALS].map((p) => [argName(p.name), p]))
  const flags: string[] = []
  const positional: string[] = []
  for (const [key, value] of Object.entries(args)) {
    if ((c.stream && STREAM_ARGS.has(key)) || value === undefined) continue
    const p = params.get(key)
    if (!p && !/^[a-z][a-z0-9_]*$/i.test(key))
      // A name that is not a word could smuggle a flag and its value (`format=text`) into one token.
      throw new AgentError('E_USAGE', `Unknown argument: ${JSON.stringify(key)}`, {
        details: { got: key, allowed: [...params.keys()] },
      })
    if (!p) {
      flags.push(`--${key.replaceAll('_', '-')}`, ...(value === true ? [] : [String(value)]))
      continue
    }
    const values = Array.isArray(value) && p.multiple ? value : [value]
    if (p.kind === 'arg') {
      for (const v of values) positional.push(scalar(p, v))
      continue
    }
    if (p.type === 'boolean') {
      if (value === true) flags.push(`--${p.name}`)
      else if (value !== false) flags.push(`--${p.name}=${scalar(p, value)}`)
      continue
    }
    for (const v of values) {
      const text = scalar(p, v)
      if (text.startsWith('-')) flags.push(`--${p.name}=${text}`)
      else flags.push(`--${p.name}`, text)
    }
  }
  const dashed = positional.some((v) => v.startsWith('-'))
  return [...c.path.split(' '), ...(dashed ? [...flags, '--', ...positional] : [...positional, ...flags])]
}
