import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getResponse, type RequestHandler } from 'msw'

/**
 * The upstream API for command-level tests. The bin runs in another process, where msw cannot intercept
 * fetch, so the handlers are served on a loopback port: same handlers, same msw semantics, a real socket.
 */
export type Upstream = {
  url: string
  use(...handlers: RequestHandler[]): void
  reset(): void
  close(): Promise<void>
  requests: Request[]
}

export async function startUpstream(defaults: RequestHandler[]): Promise<Upstream> {
  let handlers = [...defaults]
  const requests: Request[] = []
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined
    const init: RequestInit = { method: req.method ?? 'GET', headers: req.headers as Record<string, string> }
    if (body && req.method !== 'GET') init.body = body
    const request = new Request(`http://${req.headers.host}${req.url}`, init)
    requests.push(request.clone())
    const response =
      (await getResponse(handlers, request)) ?? new Response(JSON.stringify({ error: 'no handler' }), { status: 501 })
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  // The default 5 s idle close races a client that reuses the socket at that instant (ECONNRESET on a POST, which
  // no client retries); the sockets live until close(), which ends them all.
  server.keepAliveTimeout = 0
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    use: (...extra) => {
      handlers = [...extra, ...handlers]
    },
    reset: () => {
      handlers = [...defaults]
      requests.length = 0
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
