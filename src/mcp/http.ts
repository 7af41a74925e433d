import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AgentError } from '../errors/agent-error.js'
import type { CallPrincipal } from './call-tool.js'
import { killGraceOf, stopAll } from './children.js'
import { type FactoryOptions, mcpFactory } from './factory.js'
import { maxMessageBytesOf } from './framing.js'
import { bodyDeadlineMs, discardWithin, readBody } from './http-body.js'
import { checkExposure, checkResource, forwardedBy, forwardedRefusal, isLoopback } from './http-exposure.js'
import { cancelledIdOf, isInitialize, legacyCalls, requestIdOf, SESSION_HEADER } from './legacy-cancel.js'
import { listenHeaderRefusal } from './listen-headers.js'
import type { ListenAnswer } from './task-listen.js'

/** Who may call: a bearer token's verifier, with what the 401 challenge and the RFC 9728 document advertise. */
export type HttpAuth = {
  /** Check a bearer token; resolve with its subject (and issuer), reject (any error) when it is not accepted. */
  verify: (token: string) => Promise<{ subject: string; issuer: string; expiresAt: number; scopes: string[] }>
  /** The authorization server(s) the RFC 9728 metadata names. */
  authorizationServers: string[]
}

/** Options of {@link serveMcpHttp}. */
export type HttpServeOptions = FactoryOptions & {
  /** The interface to listen on (default `127.0.0.1`). */
  host: string
  /** The port (0: any free one; the log line says which). */
  port: number
  /** Host names (without port) a request's `Host` and `Origin` may name besides the listener's own. */
  allowedHosts?: readonly string[]
  /** The public URL of the endpoint when a reverse proxy serves it (the resource of the RFC 9728 metadata). */
  publicUrl?: string
  /**
   * Bearer authentication for the endpoint's resource URL; required off loopback, and when the public URL or an
   * allowed host is not a loopback name.
   */
  auth?: (resource: string) => HttpAuth
  /**
   * Whether tokens must name the resource URL itself (an issuer's JWTs without an explicit audience): the resource
   * must then be a URL clients reach, so a wildcard listener (`0.0.0.0`) without `publicUrl` is refused.
   */
  audienceFromResource?: boolean
  /** The most requests served at once; more are answered 503 with Retry-After (default 32). */
  maxConcurrent?: number
  /** Aborted (SIGINT/SIGTERM of the server): stop accepting, let running calls answer (interrupted), close. */
  signal?: AbortSignal
  /** The run's own `extendInterruptGrace` (from the command's run state): lets running calls print their answer. */
  extendInterruptGrace?: ((ms: number) => void) | undefined
  /** Called once listening, with the endpoint's URL (the command logs it on stderr). */
  onListening?: (url: string) => void
}

/** The path of the MCP endpoint. */
export const MCP_PATH = '/mcp'

/**
 * Serve the tool over MCP's Streamable HTTP transport on `host:port` at {@link MCP_PATH}, until `signal` aborts.
 * One endpoint answers both revisions the SDK serves: 2026-07-28 (stateless, per-request envelope) and the
 * 2025-11-25 handshake (served statelessly: each request by a fresh server instance). Before the SDK sees a
 * request, in this order and from its headers alone until the body is read: `Host` and `Origin` are checked
 * against the listener's names (DNS rebinding); with `auth` a bearer token is required (401 with `WWW-Authenticate`
 * naming the RFC 9728 metadata, served at the resource's well-known path); a declared body over the tool's message
 * limit is 413; at most `maxConcurrent` requests run at once (503); then the body is read, at most the limit and
 * within its deadline (`./http-body.ts`, else 408). An `MCP-Protocol-Version` header must name a revision the SDK
 * speaks (its own check). Refuses to start (`E_CONFIG`) where callers off this machine could reach it without a
 * token (`./http-exposure.ts`).
 */
export async function serveMcpHttp(options: HttpServeOptions): Promise<{ requests: number; url: string }> {
  const publicUrl = checkExposure({
    host: options.host,
    publicUrl: options.publicUrl,
    allowedHosts: options.allowedHosts,
    authenticated: options.auth !== undefined,
  })
  const maxBytes = maxMessageBytesOf(options.config)
  const maxConcurrent = options.maxConcurrent ?? 32
  const { sdk, build, listener } = await mcpFactory(options)
  const calls = legacyCalls()
  /** Requests whose body is being read: the server stopping cuts them. */
  const reading = new Set<IncomingMessage>()
  const handler = sdk.createMcpHandler(
    // A 2025-era request is served by a fresh instance with no session: a person's answer to an elicitation would
    // arrive at another one, so those instances never ask (writes answer with the plain dry_run → confirm gate).
    (ctx) => build(principalOf(ctx.authInfo), ctx.era === 'modern'),
    {
      legacy: 'stateless',
      maxRequestBodySize: maxBytes,
      onerror: (error) => process.stderr.write(`mcp: ${error.message}\n`),
    },
  )
  // Calls that stop as asked print their own E_INTERRUPTED: the process waits for them before it exits.
  options.extendInterruptGrace?.(killGraceOf(options.config) + 1000)

  let requests = 0
  let inFlight = 0
  let closing = false
  let idle: (() => void) | undefined
  const server = createServer((req, res) => {
    requests++
    serve(req, res)
      .catch((error: unknown) => {
        process.stderr.write(`mcp: ${(error as Error).message}\n`)
        if (!res.headersSent) plain(res, 500, 'internal error')
        else res.destroy()
      })
      // Answered before its body ended (refused from its headers, or past the size limit): the rest is bounded too.
      .finally(() => discardWithin(req, maxBytes))
  })
  // Node's request timeout covers receiving the request only (headers and body), never the response: a long call
  // or an SSE stream runs past it. Each body has its own, shorter deadline (readBody); this one is the backstop for
  // a request whose body nothing reads, past the headers' 30 s, a token's check (an issuer's metadata and keys,
  // 10 s a fetch) and the largest body's deadline.
  server.headersTimeout = 30_000
  server.requestTimeout = server.headersTimeout + 60_000 + bodyDeadlineMs(maxBytes)

  const listening = new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new AgentError('E_CONFIG', `cannot listen on ${options.host}:${options.port}: ${error.code ?? error.message}`, {
          details: { host: options.host, port: options.port, reason: error.code ?? error.message },
        }),
      ),
    )
    server.listen(options.port, options.host, () => resolve(server.address() as AddressInfo))
  })
  const address = await listening
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${hostPart}:${address.port}${MCP_PATH}`
  const resource = publicUrl ?? new URL(url)
  try {
    checkResource(resource, options.audienceFromResource === true)
  } catch (error) {
    server.close()
    throw error
  }
  const names = [
    ...new Set([
      ...(isLoopback(options.host) ? sdk.localhostAllowedHostnames() : []),
      hostPart,
      options.host,
      resource.hostname,
      ...(options.allowedHosts ?? []),
    ]),
  ]
  const auth = options.auth?.(resource.href)
  // RFC 9728 §3.1: the well-known path goes before the resource's own path (`/tools/mcp` behind a proxy: at
  // `/.well-known/oauth-protected-resource/tools/mcp`). A proxy forwards that path as it is, so it is served here,
  // as is the listener's own (`…/mcp`), which a client reaching the listener directly asks for.
  const metadataUrl = sdk.getOAuthProtectedResourceMetadataUrl(resource)
  const metadataPaths = new Set([new URL(metadataUrl).pathname, `/.well-known/oauth-protected-resource${MCP_PATH}`])
  const gate = auth
    ? sdk.requireBearerAuth({
        verifier: {
          verifyAccessToken: async (token: string) => {
            const got = await auth.verify(token).catch((error: unknown) => {
              throw new sdk.OAuthError(sdk.OAuthErrorCode.InvalidToken, (error as Error).message || 'invalid token')
            })
            return {
              token,
              clientId: got.subject,
              scopes: got.scopes,
              expiresAt: got.expiresAt,
              extra: { subject: got.subject, issuer: got.issuer },
            }
          },
        },
        resourceMetadataUrl: metadataUrl,
      })
    : undefined
  options.onListening?.(url)

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (closing) return plain(res, 503, 'the server is stopping', { connection: 'close' })
    const path = (req.url ?? '/').split('?')[0]!
    // DNS rebinding: a page on another site that resolved its name to this address still sends its own Host.
    const hostRefusal = sdk.hostHeaderValidationResponse(headersOnly(req), names)
    if (hostRefusal) return send(res, hostRefusal)
    const originRefusal = sdk.originValidationResponse(headersOnly(req), names)
    if (originRefusal) return send(res, originRefusal)
    if (auth && metadataPaths.has(path)) {
      if (req.method !== 'GET') return plain(res, 405, 'GET only', { allow: 'GET' })
      return json(res, 200, {
        resource: resource.href,
        authorization_servers: auth.authorizationServers,
        bearer_methods_supported: ['header'],
        resource_name: options.config.bin,
      })
    }
    if (path !== MCP_PATH) return plain(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`)
    const forwarded = auth ? undefined : forwardedBy(req.headers)
    if (forwarded) return plain(res, 403, forwardedRefusal(forwarded))
    // The token is checked from the headers, before the request takes a slot or any of its body is read: a caller
    // without one can neither hold the slots nor make the server buffer bodies.
    let authInfo: import('@modelcontextprotocol/server').AuthInfo | undefined
    if (gate) {
      const checked = await gate(headersOnly(req))
      if (checked instanceof Response) return send(res, checked)
      authInfo = checked
    }
    const declared = Number(req.headers['content-length'] ?? 0)
    if (declared > maxBytes) return rpcError(res, 413, `Payload Too Large: at most ${maxBytes} bytes`)
    if (closing) return plain(res, 503, 'the server is stopping', { connection: 'close' })
    if (inFlight >= maxConcurrent)
      return plain(res, 503, `at most ${maxConcurrent} requests at once`, { 'retry-after': '1' })
    inFlight++
    res.once('close', () => {
      inFlight--
      if (inFlight === 0) idle?.()
    })
    reading.add(req)
    const read = await (req.method === 'POST' ? readBody(req, maxBytes) : Promise.resolve(undefined))
      .catch((error: unknown) => {
        // Cut while it arrived: by the client, or by the server stopping (below), which answers nothing more.
        if (closing) return undefined
        throw error
      })
      .finally(() => reading.delete(req))
    // A body that ended after the server was told to stop starts nothing: its call would outlive the stop of the
    // calls already running, and a write could be applied while the server says it is stopping.
    if (closing) return plain(res, 503, 'the server is stopping', { connection: 'close' })
    if (read && 'refused' in read)
      return read.refused === 'too_large'
        ? rpcError(res, 413, `Payload Too Large: at most ${maxBytes} bytes`)
        : rpcError(res, 408, `Request Timeout: the body did not arrive within ${read.afterMs / 1000} s`, {
            connection: 'close',
          })
    const body = read?.body
    const abort = new AbortController()
    res.once('close', () => abort.abort())
    const request = new Request(new URL(req.url ?? '/', resource), {
      method: req.method ?? 'GET',
      headers: headersOf(req),
      ...(body !== undefined ? { body } : {}),
      signal: abort.signal,
    })
    const message = body && req.method === 'POST' ? jsonOf(body) : undefined
    // A listen for tasks is served here (the SDK's router drops `taskIds`: ./task-listen.ts), for the caller's own.
    const listen = message !== undefined && listener.claims(message) ? message : undefined
    const refusal = listen ? listenHeaderRefusal(sdk, req, listen) : undefined
    if (refusal === 'legacy') return send(res, await handler.fetch(request, authInfo ? { authInfo } : {}))
    if (refusal) return json(res, refusal.httpStatus, { jsonrpc: '2.0', id: listen?.id ?? null, error: refusal.error })
    const principal = principalOf(authInfo)
    if (listen) return serveListen(res, await listener.open(listen, principal))
    // A 2025-11-25 client's cancel names its call by id, within the session its handshake was given (./legacy-cancel.ts);
    // the notification itself still goes to the SDK, which acknowledges it.
    const session = sessionOf(req)
    const cancelled = session ? cancelledIdOf(message) : undefined
    if (session && cancelled !== undefined) calls.cancel(principal, session, cancelled)
    const id = session ? requestIdOf(message) : undefined
    if (session && id !== undefined) res.once('close', calls.track(principal, session, id, abort))
    const answer = await handler.fetch(request, authInfo ? { authInfo } : {})
    const handshake = isInitialize(message) && answer.ok && !answer.headers.has(SESSION_HEADER)
    await send(res, answer, handshake ? { [SESSION_HEADER]: calls.newSession() } : {})
  }

  await new Promise<void>((resolve) => {
    if (options.signal?.aborted) return resolve()
    options.signal?.addEventListener('abort', () => resolve(), { once: true })
  })
  closing = true
  // Open listens end with their graceful result, as the SDK's own do.
  listener.closeAll()
  server.close()
  server.closeIdleConnections()
  // A body still arriving is cut rather than waited for: nothing was started for it.
  for (const req of reading) req.socket.destroy()
  // Every call still running gets SIGTERM, answered like Ctrl-C (its own E_INTERRUPTED goes back to its client), then the
  // requests they belong to end.
  const running = stopAll('SIGTERM')
  if (running.count > 0) process.stderr.write(`mcp: stopping ${running.count} running call(s)\n`)
  await running.done
  if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve))
  await handler.close()
  server.closeAllConnections()
  return { requests, url }
}

/** The body as JSON, or undefined (the SDK answers what is not JSON). */
function jsonOf(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
}

/** The request's session id (one header of visible ASCII, as the server issues them), if it carries one. */
function sessionOf(req: IncomingMessage): string | undefined {
  const value = req.headers[SESSION_HEADER]
  return typeof value === 'string' && /^[\x21-\x7e]{1,128}$/.test(value) ? value : undefined
}

/** A listen's answer: its JSON-RPC error, or its SSE stream until the client goes or the server stops. */
function serveListen(res: ServerResponse, answer: ListenAnswer): void {
  // The client went while its tasks were read: no stream is started, so none holds a slot until its tasks settle.
  if (res.destroyed) return
  if ('error' in answer) {
    json(res, 200, answer.error)
    return
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  res.flushHeaders()
  const keepAlive = setInterval(() => res.write(': keepalive\n\n'), 15_000)
  keepAlive.unref()
  const stop = answer.start({
    send: (message) => void res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
    end: () => {
      clearInterval(keepAlive)
      res.end()
    },
  })
  res.once('close', () => {
    clearInterval(keepAlive)
    stop()
  })
}

function principalOf(authInfo: import('@modelcontextprotocol/server').AuthInfo | undefined): CallPrincipal {
  const extra = authInfo?.extra as { subject?: unknown; issuer?: unknown } | undefined
  if (typeof extra?.subject !== 'string' || typeof extra.issuer !== 'string') return undefined
  return { subject: extra.subject, issuer: extra.issuer }
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers()
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
  return headers
}

/** A body-less Request carrying only the headers, for the SDK's Host, Origin and bearer token checks. */
function headersOnly(req: IncomingMessage): Request {
  return new Request('http://validation.invalid/', { headers: headersOf(req) })
}

async function send(res: ServerResponse, response: Response, extra: Record<string, string> = {}): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, key) => {
    headers[key] = value
  })
  res.writeHead(response.status, { ...headers, ...extra })
  if (!response.body) return void res.end()
  res.flushHeaders()
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (res.destroyed) break
    res.write(chunk)
  }
  res.end()
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

function plain(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  json(res, status, { error: message }, headers)
}

function rpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  json(res, status, { jsonrpc: '2.0', id: null, error: { code: -32600, message } }, headers)
}
