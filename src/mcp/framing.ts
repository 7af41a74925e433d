import { PassThrough, type Readable } from 'node:stream'
import type { ToolConfig } from '../runtime/tool-config.js'
import { integerSetting } from '../settings/package-section.js'

/** The largest JSON-RPC message (one line on stdin, in bytes) `tool mcp` reads unless its author sets another. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

/** The bounds of `max_message_bytes`: at least a `tools/call` with small arguments, at most what one line should hold. */
const MESSAGE_BYTES = { min: 64 * 1024, max: 256 * 1024 * 1024 } as const

/** The message limit a tool's author set in package.json (`"agentcli": {"mcp": {"max_message_bytes": n}}`), checked. */
export function maxMessageBytesOf(config: ToolConfig): number {
  return integerSetting(config, {
    section: 'mcp',
    key: 'max_message_bytes',
    fallback: DEFAULT_MAX_MESSAGE_BYTES,
    ...MESSAGE_BYTES,
    unit: 'bytes',
  })
}

/** JSON-RPC's error codes for what never became a request. */
export const JSONRPC = { parseError: -32700, invalidRequest: -32600 } as const

/** An error answer to a line that is not a message the server can take. */
export type FramingError = {
  jsonrpc: '2.0'
  id: string | number | null
  error: { code: number; message: string; data?: Record<string, unknown> }
}

type Options = {
  maxBytes: number
  /** The JSON-RPC message a parsed value is, as the SDK reads it (its schema), or undefined when it is none. */
  message: (value: unknown) => unknown
  /**
   * Hand a message to the SDK's reader as it is, already parsed and checked: false when the reader cannot take it
   * now (the line then goes on the stream, as without it).
   */
  deliver?: (message: unknown) => boolean
  /** Send an error answer (one line on stdout, through the transport's writer). */
  answer: (error: FramingError) => void
  /** A message the server serves itself, before the SDK (a listen for tasks): true when it took it. */
  take?: (message: unknown) => boolean
}

const refusal = (
  id: FramingError['id'],
  code: number,
  message: string,
  data?: Record<string, unknown>,
): FramingError => ({ jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } })

function idOf(value: unknown): FramingError['id'] {
  const id = (value as { id?: unknown } | null)?.id
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null
}

/**
 * stdin cut into JSON-RPC lines before the SDK's transport reads them. The SDK buffers a line without bound up to
 * 10 MiB and then closes the session, and drops a malformed line without an answer; here a line longer than
 * `maxBytes` is answered `-32600` (id null: it is never parsed) and skipped to its newline without being held,
 * a line that is not JSON `-32700`, JSON that is not a JSON-RPC message `-32600` with its id when it has one, and
 * the next line is read as usual. Only whole, well-formed messages reach the returned stream, or `deliver`.
 */
export function framedInput(source: Readable, options: Options): PassThrough {
  const out = new PassThrough()
  let parts: Buffer[] = []
  let size = 0
  let skipping = false
  const deliver = (line: Buffer) => {
    const text = line.toString('utf8').replace(/\r$/, '')
    if (text.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return options.answer(refusal(null, JSONRPC.parseError, 'Parse error: the line is not JSON'))
    }
    const message = options.message(value)
    if (message === undefined)
      return options.answer(refusal(idOf(value), JSONRPC.invalidRequest, 'Invalid Request: not a JSON-RPC message'))
    if (options.take?.(value)) return
    if (options.deliver?.(message)) return
    out.write(`${text}\n`)
  }
  source.on('data', (chunk: Buffer) => {
    let start = 0
    for (;;) {
      const nl = chunk.indexOf(0x0a, start)
      const end = nl === -1 ? chunk.length : nl
      if (!skipping) {
        if (size + end - start > options.maxBytes) {
          skipping = true
          parts = []
          size = 0
          options.answer(
            refusal(null, JSONRPC.invalidRequest, `Invalid Request: the message exceeds ${options.maxBytes} bytes`, {
              max_bytes: options.maxBytes,
            }),
          )
        } else if (end > start) {
          parts.push(chunk.subarray(start, end))
          size += end - start
        }
      }
      if (nl === -1) return
      if (!skipping) deliver(Buffer.concat(parts, size))
      parts = []
      size = 0
      skipping = false
      start = nl + 1
    }
  })
  const finish = () => {
    if (!out.writableEnded) out.end()
  }
  source.once('end', finish)
  source.once('close', finish)
  return out
}
