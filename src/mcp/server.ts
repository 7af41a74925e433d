import { type Duplex, Writable } from 'node:stream'
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
  // The transport once it exists: lines that arrive before (none can: stdin is read on a later turn) take the stream.
  let reader: Reader | undefined
  const input = framedInput(process.stdin, {
    maxBytes,
    message: (value) => messageOf(sdk, value),
    // A message the transport is reading now goes to it as parsed and checked here, by the very parse its own reader
    // does (`parseJSONRPCMessage`): not written, read, parsed and checked a second time.
    deliver: (message) => deliverTo(reader, input, message),
    answer: (error) => {
      process.stderr.write(`mcp: refused a message: ${error.error.message}\n`)
      stdout.write(`${JSON.stringify(error)}\n`)
    },
    // Status notifications of tasks: the SDK cannot serve a listen for them (./task-listen.ts), so it never sees
    // one, nor the cancel of one.
    take: stdioListens(listener, (line) => stdout.write(`${JSON.stringify(line)}\n`)),
  })
  // Lines reach the SDK whole and bounded (framedInput), so its own buffer limit, which closes the session, is off.
  const transport = new StdioServerTransport(input, stdout, { maxBufferSize: Number.POSITIVE_INFINITY })
  reader = transport
  const handle = serveStdio(() => build(), {
    transport,
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

function messageOf(sdk: typeof import('@modelcontextprotocol/server'), value: unknown): unknown {
  try {
    return sdk.parseJSONRPCMessage(value)
  } catch {
    return undefined
  }
}

type Reader = Pick<import('@modelcontextprotocol/server/stdio').StdioServerTransport, 'onmessage' | 'onerror'>

/**
 * Give `message` to the transport as its own reader would (`onmessage`, a throw to `onerror`), only while it reads
 * `input` (started, not closed) and nothing is queued there ahead of it; else false, and the line goes on `input`.
 */
function deliverTo(transport: Reader | undefined, input: Duplex, message: unknown): boolean {
  const queued = input.readableLength > 0 || input.writableLength > 0
  if (!transport?.onmessage || input.listenerCount('data') === 0 || queued) return false
  try {
    transport.onmessage(message as never)
  } catch (error) {
    transport.onerror?.(error as Error)
  }
  return true
}
