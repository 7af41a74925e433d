import { Writable } from 'node:stream'
import { writeStdout } from '../output/stdout.js'
import { stopAll } from './children.js'
import { type FactoryOptions, mcpFactory } from './factory.js'
import { framedInput, maxMessageBytesOf } from './framing.js'
import type { TaskListener } from './task-listen.js'

/** Options of {@link serveMcp}. */
export type ServeOptions = FactoryOptions & {
  /** Aborted (SIGINT/SIGTERM of the server): stop serving. */
  signal?: AbortSignal
}

/**
 * Serve the tool over MCP on stdin/stdout until the client goes away. Every command of `reference` is a tool;
 * a call runs the tool's own bin with the argv the arguments map to (see {@link toArgv}), so a result's
 * `structuredContent` is the envelope the CLI prints for that call, with its codes, write gate and ledger.
 */
export async function serveMcp(options: ServeOptions): Promise<{ messages: number }> {
  // A bad limit in package.json is E_CONFIG before anything is read.
  const maxBytes = maxMessageBytesOf(options.config)
  const { sdk, build, listener } = await mcpFactory(options)
  const { StdioServerTransport, serveStdio } = await import('@modelcontextprotocol/server/stdio')
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      void writeStdout(chunk).then(() => done())
    },
  })
  let messages = 0
  const spoke = () => {
    messages++
  }
  process.stdin.once('data', spoke)
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve)
    process.stdin.once('close', resolve)
    options.signal?.addEventListener('abort', () => resolve(), { once: true })
  })
  const input = framedInput(process.stdin, {
    maxBytes,
    isMessage: (value) => isMessage(sdk, value),
    answer: (error) => {
      process.stderr.write(`mcp: refused a message: ${error.error.message}\n`)
      stdout.write(`${JSON.stringify(error)}\n`)
    },
    // Status notifications of tasks: the SDK cannot serve a listen for them (./task-listen.ts), so it never sees
    // one, nor the cancel of one.
    take: stdioListens(listener, (line) => stdout.write(`${JSON.stringify(line)}\n`)),
  })
  const handle = serveStdio(() => build(), {
    // Lines reach the SDK whole and bounded (framedInput), so its own buffer limit, which closes the session, is off.
    transport: new StdioServerTransport(input, stdout, { maxBufferSize: Number.POSITIVE_INFINITY }),
    onerror: (error) => process.stderr.write(`mcp: ${error.message}\n`),
  })
  await closed
  process.stdin.off('data', spoke)
  listener.closeAll()
  // Every call still running is stopped (SIGTERM to its group, SIGKILL after the grace) before the server exits.
  const running = stopAll('SIGTERM')
  if (running.count > 0) process.stderr.write(`mcp: stopping ${running.count} running call(s)\n`)
  await running.done
  await handle.close()
  return { messages }
}

/**
 * The listens for tasks of one stdio connection (the principal is the local user): a listen, or the client's
 * `notifications/cancelled` of one, is taken here; anything else goes on to the SDK.
 */
function stdioListens(listener: TaskListener, send: (line: Record<string, unknown>) => void) {
  const open = new Map<unknown, () => void>()
  return (message: unknown): boolean => {
    const m = message as { method?: unknown; params?: { requestId?: unknown } } | null
    if (m?.method === 'notifications/cancelled' && open.has(m.params?.requestId)) {
      open.get(m.params?.requestId)!()
      open.delete(m.params?.requestId)
      return true
    }
    if (!listener.claims(message)) return false
    void listener.open(message, undefined).then((answer) => {
      if ('error' in answer) return send(answer.error)
      const { id } = message
      open.get(id)?.()
      open.delete(id)
      let stop: (() => void) | undefined
      let ended = false
      stop = answer.start({
        send,
        end: () => {
          ended = true
          if (stop && open.get(id) === stop) open.delete(id)
        },
      })
      // A stream whose tasks had all settled ended as it started.
      if (!ended) open.set(id, stop)
    })
    return true
  }
}

function isMessage(sdk: typeof import('@modelcontextprotocol/server'), value: unknown): boolean {
  try {
    sdk.parseJSONRPCMessage(value)
    return true
  } catch {
    return false
  }
}
