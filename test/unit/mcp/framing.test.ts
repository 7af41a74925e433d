import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  type FramingError,
  framedInput,
  maxMessageBytesOf,
} from '../../../src/mcp/framing.js'
import type { ToolConfig } from '../../../src/runtime/tool-config.js'

const message = (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && (v as { jsonrpc?: unknown }).jsonrpc === '2.0'
    ? v
    : undefined

/** Feed chunks through the framing; what reached the SDK's side, and what was answered. */
async function frame(chunks: Array<string | Buffer>, maxBytes = 64) {
  const source = new PassThrough()
  const answers: FramingError[] = []
  const out = framedInput(source, { maxBytes, message, answer: (e) => answers.push(e) })
  const passed: string[] = []
  out.on('data', (c: Buffer) => passed.push(c.toString('utf8')))
  for (const c of chunks) source.write(c)
  source.end()
  await new Promise((r) => out.once('end', r))
  return { passed: passed.join(''), answers }
}

const msg = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })

describe('framing stdin into JSON-RPC lines', () => {
  it('passes whole messages on, whatever the chunking, CRLF and blank lines included', async () => {
    const text = `${msg(1)}\r\n\n${msg(2)}\n`
    const one = await frame([text])
    const bytes = await frame([...Buffer.from(text)].map((b) => Buffer.from([b])))
    expect(one).toEqual({ passed: `${msg(1)}\n${msg(2)}\n`, answers: [] })
    expect(bytes).toEqual(one)
  })

  it('answers a line over the limit -32600 with id null, once, without holding it, and reads on', async () => {
    const long = `{"jsonrpc":"2.0","id":3,"method":"x","params":"${'y'.repeat(100)}"}`
    const { passed, answers } = await frame([long.slice(0, 40), long.slice(40, 90), `${long.slice(90)}\n${msg(4)}\n`])
    expect(answers).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringContaining('64 bytes'), data: { max_bytes: 64 } },
      },
    ])
    expect(passed).toBe(`${msg(4)}\n`)
  })

  it('takes a line of exactly the limit; one byte more is refused', async () => {
    const exact = `${msg(5).slice(0, -1)}${' '.repeat(64 - msg(5).length)}}`
    expect(Buffer.byteLength(exact)).toBe(64)
    expect((await frame([`${exact}\n`])).passed).toBe(`${exact}\n`)
    expect((await frame([` ${exact}\n`])).answers).toHaveLength(1)
  })

  it('answers what is not JSON -32700 and JSON that is not a message -32600, with its id when it has one', async () => {
    const { passed, answers } = await frame([
      '{"jsonrpc":\n',
      '{"id":7,"method":5}\n',
      '[]\n',
      '{"id":{"a":1}}\n',
      `${msg(8)}\n`,
    ])
    expect(answers.map((a) => [a.error.code, a.id])).toEqual([
      [-32700, null],
      [-32600, 7],
      [-32600, null],
      [-32600, null],
    ])
    expect(passed).toBe(`${msg(8)}\n`)
  })

  it('ends when stdin ends, a last line without newline dropped unanswered', async () => {
    expect(await frame([`${msg(9)}\n{"jsonrpc"`])).toEqual({ passed: `${msg(9)}\n`, answers: [] })
  })
})

describe('the message limit a tool sets', () => {
  const config = (mcp?: unknown) => ({ pjson: { agentcli: mcp === undefined ? {} : { mcp } } }) as unknown as ToolConfig

  it('is 4 MiB unless package.json sets agentcli.mcp.max_message_bytes', () => {
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(4 * 1024 * 1024)
    expect(maxMessageBytesOf(config())).toBe(DEFAULT_MAX_MESSAGE_BYTES)
    expect(maxMessageBytesOf(config({ max_message_bytes: 1024 * 1024 }))).toBe(1024 * 1024)
  })

  it('refuses a value out of bounds or not an integer with E_CONFIG naming the setting and the bounds', () => {
    for (const got of [0, -1, 1024, 1.5e6 + 0.5, '4194304', 512 * 1024 * 1024, null])
      expect(() => maxMessageBytesOf(config({ max_message_bytes: got })), String(got)).toThrow(
        expect.objectContaining({
          code: 'E_CONFIG',
          details: { setting: 'agentcli.mcp.max_message_bytes', allowed: '65536..268435456', got },
        }),
      )
  })
})

describe('framing hands messages to a reader directly', () => {
  it('gives each message to deliver as parsed, and puts on the stream only what deliver declines', async () => {
    const source = new PassThrough()
    const delivered: unknown[] = []
    const out = framedInput(source, {
      maxBytes: 64,
      message,
      answer: () => undefined,
      deliver: (m) => (m as { id: number }).id !== 2 && delivered.push(m) > 0,
    })
    const passed: string[] = []
    out.on('data', (c: Buffer) => passed.push(c.toString('utf8')))
    source.end(`${msg(1)}\n${msg(2)}\n`)
    await new Promise((r) => out.once('end', r))
    expect(delivered).toEqual([JSON.parse(msg(1))])
    expect(passed.join('')).toBe(`${msg(2)}\n`)
  })
})
