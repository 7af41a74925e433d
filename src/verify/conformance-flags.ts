import { usageError } from '../errors/agent-error.js'

/** The flags of verify that decide what a `--url` run may be combined with. */
export type ConformanceFlags = {
  conformance: boolean
  url?: string | undefined
  baseline?: string | undefined
  revision?: string | undefined
  fuzz: number
  seed?: number | undefined
  setup?: string[] | undefined
  env?: string[] | undefined
  'allow-upstream'?: string[] | undefined
  release: boolean
}

/** What a `--url` run takes besides the universal flags. */
export const URL_RUN_FLAGS = [
  '--mcp',
  '--conformance',
  '--url',
  '--revision',
  '--baseline',
  '--timeout-ms',
  '--junit',
  '--sarif',
] as const

const EXAMPLE = 'agentcli verify --mcp --conformance --url http://127.0.0.1:3000/mcp'

/**
 * Refuse, before anything runs, the combinations that have no meaning: `--url`, `--baseline` or `--revision` outside
 * a `--mcp --conformance` run; `--url` and a command together (which server would the suite judge?); and with
 * `--url`, a flag that only a command's run reads (its sandbox, its writes, its reference), which would otherwise
 * be silently ignored. Each is `E_USAGE` naming what was given and what is allowed.
 */
export function checkConformanceFlags(flags: ConformanceFlags, command: readonly string[]): void {
  const suiteOnly = (['url', 'baseline', 'revision'] as const).filter((f) => flags[f] !== undefined)
  if (!flags.conformance && suiteOnly.length > 0)
    throw usageError(
      `${suiteOnly.map((f) => `--${f}`).join(', ')} ${suiteOnly.length === 1 ? 'belongs' : 'belong'} to the official MCP conformance suite: add --mcp --conformance`,
      { got: suiteOnly.map((f) => `--${f}`), fix: `${EXAMPLE}, or verify --mcp --conformance -- <command>` },
    )
  if (flags.url === undefined) return
  if (command.length > 0)
    throw usageError(
      '--url and a command after -- name two servers: give one (a URL for any MCP server, a command for an agentcli tool)',
      {
        param: '--url',
        got: command.join(' '),
        allowed: [`${EXAMPLE}`, 'agentcli verify --mcp --conformance -- <command>'],
      },
    )
  const given: Array<[boolean, string]> = [
    [flags.fuzz > 0, '--fuzz'],
    [flags.seed !== undefined, '--seed'],
    [(flags.setup ?? []).length > 0, '--setup'],
    [(flags.env ?? []).length > 0, '--env'],
    [(flags['allow-upstream'] ?? []).length > 0, '--allow-upstream'],
    [flags.release, '--release'],
  ]
  const commandOnly = given.filter(([on]) => on).map(([, name]) => name)
  if (commandOnly.length > 0)
    throw usageError(
      `${commandOnly.join(', ')} ${commandOnly.length === 1 ? 'needs' : 'need'} a command after --: a --url run is the official suite alone`,
      { param: '--url', got: commandOnly, allowed: [...URL_RUN_FLAGS] },
    )
}
