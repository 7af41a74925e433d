import { Writable } from 'node:stream'
import { writeStdout } from '../output/stdout.js'
import { stopAll } from './children.js'
import { type FactoryOptions, mcpFactory } from './factory.js'
import { framedInput, maxMessageBytesOf } from './framing.js'

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
  const { sdk, build } = await mcpFactory(options)
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
  })
  const handle = serveStdio(() => build(), {
    // Lines reach the SDK whole and bounded (framedInput), so its own buffer limit, which closes the session, is off.
    transport: new StdioServerTransport(input, stdout, { maxBufferSize: Number.POSITIVE_INFINITY }),
    onerror: (error) => process.stderr.write(`mcp: ${error.message}\n`),
  })
  await closed
  process.stdin.off('data', spoke)
  // Every call still running is stopped (SIGTERM to its group, SIGKILL after the grace) before the server exits.
  const running = stopAll('SIGTERM')
  if (running.count > 0) process.stderr.write(`mcp: stopping ${running.count} running call(s)\n`)
  await running.done
  await handle.close()
  return { messages }
}

function isMessage(sdk: typeof import('@modelcontextprotocol/server'), value: unknown): boolean {
  try {
    sdk.parseJSONRPCMessage(value)
    return true
  } catch {
    return false
  }
}
