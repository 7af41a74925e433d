import { scrubArgv } from '../audit/argv.js'

/** MCP's log levels (the syslog severities), least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/** Where a 2026-07-28 request names the least severe level it wants logged (no key: nothing is logged). */
const LOG_LEVEL_META = 'io.modelcontextprotocol/logLevel'

/** What the logging utility reads of a request's context. */
export type LogCtx = {
  mcpReq: {
    envelope?: Record<string, unknown>
    notify(notification: { method: 'notifications/message'; params: Record<string, unknown> }): Promise<void>
  }
}

/** What one finished call says in the server's log: how it ran and what it answered. */
export type CallLine = {
  argv: readonly string[]
  ran: 'cold' | 'warm' | 'in-process'
  /** The envelope's error code, null when it answered `ok` (a warm process's exit code comes after its answer). */
  code: string | null
  ms: number
  /** The end of what the tool printed on stderr (its diagnostics), if anything. */
  stderr: string
}

type Handlers = {
  server: {
    setRequestHandler(method: 'logging/setLevel', handler: (request: { params: { level: string } }) => object): void
  }
}

const rank = (level: string) => LOG_LEVELS.indexOf(level as LogLevel)

/**
 * A command line as the server may write it anywhere (its stderr, a client's log): confirm tokens and secret flag
 * values scrubbed by the audit's one scrubber.
 */
export function loggedArgv(argv: readonly string[]): string {
  return scrubArgv(argv).join(' ')
}

/**
 * The logging utility of one server instance (one stdio connection, or one HTTP request). A 2025-11-25 client
 * chooses its level with `logging/setLevel`; a 2026-07-28 request names it in `_meta` (the method is gone there,
 * and the SDK answers it as unknown). Nothing is sent to a client that did not ask, so a client that never sets a
 * level sees no notification it did not expect. Each finished call is one `debug` line; what the tool printed on
 * stderr (a warning such as a keychain fallback, already scrubbed by the tool's redactor) is one `warning` line
 * more, so a client that cannot see the server's stderr still learns it. `server` must declare the `logging`
 * capability (the SDK refuses the handler otherwise).
 */
export function callLogging(server: Handlers, logger: string) {
  let level: string | undefined
  server.server.setRequestHandler('logging/setLevel', (request) => {
    level = request.params.level
    return {}
  })
  // Whether the client asked for messages of level `at` on this request.
  const wants = (ctx: LogCtx, at: LogLevel) => {
    const wanted = ctx.mcpReq.envelope?.[LOG_LEVEL_META] ?? level
    return typeof wanted === 'string' && rank(wanted) >= 0 && rank(at) >= rank(wanted)
  }
  const send = (ctx: LogCtx, at: LogLevel, data: unknown) =>
    // A log line is never worth failing a call for (the client may have gone).
    ctx.mcpReq.notify({ method: 'notifications/message', params: { level: at, logger, data } }).catch(() => {})
  return {
    /** Log one finished call, as far as the client asked (nothing is built for a client that did not). */
    call(ctx: LogCtx, line: CallLine): void {
      const stderr = line.stderr.trim()
      const debug = wants(ctx, 'debug')
      const warning = stderr !== '' && wants(ctx, 'warning')
      if (!debug && !warning) return
      const command = loggedArgv(line.argv)
      if (debug) send(ctx, 'debug', { command, ran: line.ran, code: line.code, ms: Math.round(line.ms) })
      if (warning) send(ctx, 'warning', { command, stderr })
    },
  }
}
