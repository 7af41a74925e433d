import { describe, expect, it } from 'vitest'
import { callLogging, type LogCtx, loggedArgv } from '../../../src/mcp/logging.js'

type Sent = { method: string; params: Record<string, unknown> }

/** A server that records the handler the logging utility installs, and a request context that records what it sends. */
function fixture() {
  let setLevel: ((request: { params: { level: string } }) => object) | undefined
  const server = {
    server: {
      setRequestHandler: (method: 'logging/setLevel', handler: typeof setLevel) => {
        expect(method).toBe('logging/setLevel')
        setLevel = handler
      },
    },
  }
  const sent: Sent[] = []
  const ctx = (envelope?: Record<string, unknown>, fail = false): LogCtx => ({
    mcpReq: {
      ...(envelope ? { envelope } : {}),
      notify: (n) => {
        sent.push(n)
        return fail ? Promise.reject(new Error('the client went away')) : Promise.resolve()
      },
    },
  })
  const logging = callLogging(server, 'tasks')
  return { logging, sent, ctx, setLevel: (level: string) => setLevel!({ params: { level } }) }
}

const line = { argv: ['get', '1'], ran: 'warm' as const, code: null, ms: 12.4, stderr: '' }

describe('the MCP logging utility', () => {
  it('sends nothing to a client that never set a level', () => {
    const { logging, sent, ctx } = fixture()
    logging.call(ctx(), { ...line, stderr: 'a warning' })
    expect(sent).toEqual([])
  })

  it('after logging/setLevel (2025-11-25): a debug line per call and the stderr as a warning, at or above the level', () => {
    const { logging, sent, ctx, setLevel } = fixture()
    expect(setLevel('debug')).toEqual({})
    logging.call(ctx(), { ...line, stderr: '  keychain unavailable\n' })
    expect(sent).toEqual([
      {
        method: 'notifications/message',
        params: { level: 'debug', logger: 'tasks', data: { command: 'get 1', ran: 'warm', code: null, ms: 12 } },
      },
      {
        method: 'notifications/message',
        params: { level: 'warning', logger: 'tasks', data: { command: 'get 1', stderr: 'keychain unavailable' } },
      },
    ])
    sent.length = 0
    setLevel('warning')
    logging.call(ctx(), line)
    expect(sent).toEqual([])
    logging.call(ctx(), { ...line, stderr: 'x' })
    expect(sent.map((s) => s.params.level)).toEqual(['warning'])
    sent.length = 0
    setLevel('error')
    logging.call(ctx(), { ...line, stderr: 'x' })
    expect(sent).toEqual([])
  })

  it("a 2026-07-28 request's _meta level decides for that request alone; an unknown level sends nothing", () => {
    const { logging, sent, ctx } = fixture()
    logging.call(ctx({ 'io.modelcontextprotocol/logLevel': 'info' }), { ...line, stderr: 'x' })
    expect(sent.map((s) => s.params.level)).toEqual(['warning'])
    sent.length = 0
    logging.call(ctx({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }), { ...line, stderr: 'x' })
    logging.call(ctx({ 'io.modelcontextprotocol/logLevel': 'loud' }), { ...line, stderr: 'x' })
    expect(sent).toEqual([])
  })

  it('never fails a call when the client cannot take the line', async () => {
    const { logging, sent, ctx, setLevel } = fixture()
    setLevel('debug')
    expect(() => logging.call(ctx(undefined, true), line)).not.toThrow()
    await new Promise((r) => setImmediate(r))
    expect(sent).toHaveLength(1)
  })

  it('writes a command line with its confirm token and secret flag values scrubbed (the audit scrubber)', () => {
    expect(loggedArgv(['edit', '1', '--confirm', 'ct_3.secret'])).toBe('edit 1 --confirm <token>')
    expect(loggedArgv(['login', '--api-key=abc'])).not.toContain('abc')
  })
})
