import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { probeMcpUrl } from '../../../src/verify/mcp-http-probe.js'

// The `initialize` verify asks a --url before the suite runs: what it makes of an MCP server's answer (JSON or an
// event stream), and of what is not one.

const servers: Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections()
    await new Promise((settle) => s.close(settle))
  }
})

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler)
  servers.push(server)
  await new Promise<void>((settle) => server.listen(0, '127.0.0.1', settle))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
}

const RESULT = {
  jsonrpc: '2.0',
  id: 1,
  result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'any', version: '9.9.9' } },
}

describe('probeMcpUrl', () => {
  it('reads serverInfo from a JSON answer, and ends the session it opened', async () => {
    const seen: string[] = []
    const url = await serve((req, res) => {
      seen.push(`${req.method} ${req.headers['mcp-session-id'] ?? ''}`)
      if (req.method === 'DELETE') return void res.writeHead(200).end()
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify(RESULT))
    })
    expect(await probeMcpUrl(url, 5_000)).toEqual({ name: 'any', version: '9.9.9', protocolVersion: '2025-11-25' })
    expect(seen).toEqual(['POST ', 'DELETE s1'])
  })

  it('reads the answer out of an event stream, without waiting for a stream kept open', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(`event: message\ndata: ${JSON.stringify(RESULT)}\n\n`)
    })
    expect((await probeMcpUrl(url, 10_000)).name).toBe('any')
  })

  it.each([
    [
      'a refusal',
      (res: Parameters<RequestListener>[1]) => res.writeHead(401).end('no token'),
      /answers HTTP 401: it wants credentials, and the suite sends none/,
    ],
    [
      'a redirect',
      (res: Parameters<RequestListener>[1]) => res.writeHead(307, { location: 'http://elsewhere/mcp' }).end(),
      /redirects \(HTTP 307 to http:\/\/elsewhere\/mcp\): name the MCP endpoint itself/,
    ],
    [
      'a web page',
      (res: Parameters<RequestListener>[1]) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'),
      /is not an MCP server: .*text\/html: <html>/,
    ],
    [
      'a server error',
      (res: Parameters<RequestListener>[1]) => res.writeHead(502).end('bad gateway'),
      /answers initialize with HTTP 502: bad gateway/,
    ],
  ])('%s is the reason it rejects with', async (_, answer, reason) => {
    const url = await serve((_req, res) => answer(res))
    await expect(probeMcpUrl(url, 5_000)).rejects.toThrow(reason)
  })

  it('a JSON-RPC error (a server of the stateless revision alone): an MCP server, without serverInfo', async () => {
    const url = await serve((_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'use server/discover' } })),
    )
    expect(await probeMcpUrl(url, 5_000)).toEqual({
      name: null,
      version: null,
      protocolVersion: null,
      refused: '-32600 use server/discover',
    })
  })

  it('a server that never answers: the time limit is the reason', async () => {
    const url = await serve(() => undefined)
    await expect(probeMcpUrl(url, 300)).rejects.toThrow(/nothing answers at .*: .*timeout/i)
  })
})
