import { parseJsonObject } from '../output/json-object.js'

/**
 * What an MCP server at a URL says of itself in its answer to `initialize`; `refused` when it answers with a JSON-RPC
 * error instead (a server of the stateless revision alone may): an MCP server all the same, without a `serverInfo`.
 */
export type McpServerInfo = {
  name: string | null
  version: string | null
  protocolVersion: string | null
  refused?: string
}

/** An answer bigger than this is not an `initialize` result: reading stops there. */
const MAX_ANSWER_BYTES = 1024 * 1024

const PROTOCOL = '2025-11-25'

/**
 * Ask the Streamable HTTP server at `url` to `initialize` (2025-11-25, no client capabilities), once, before the
 * suite's scenarios: a URL where nothing answers, or where something other than an MCP server does, is one clear
 * failure instead of every scenario failing on its own. The session it opens is ended at once (DELETE). A redirect
 * is refused, not followed: the URL judged must be the one the suite is given. So is a demand for credentials
 * (401, 403): the suite sends none. Rejects with the reason.
 */
export async function probeMcpUrl(url: string, timeoutMs: number): Promise<McpServerInfo> {
  const signal = AbortSignal.timeout(timeoutMs)
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'agentcli-verify', version: '1' } },
      }),
      redirect: 'manual',
      signal,
    })
  } catch (error) {
    throw new Error(`nothing answers at ${url}: ${reason(error)}`)
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel()
    throw new Error(
      `${url} redirects (HTTP ${response.status} to ${response.headers.get('location') ?? '?'}): name the MCP endpoint itself`,
    )
  }
  const type = response.headers.get('content-type') ?? ''
  const events = type.includes('text/event-stream')
  const text = await readCapped(response, events).catch((error: unknown) => {
    throw new Error(`${url} broke off its answer to initialize: ${reason(error)}`)
  })
  if (response.status === 401 || response.status === 403)
    throw new Error(
      `${url} answers HTTP ${response.status}: it wants credentials, and the suite sends none (verify a test instance without its auth)`,
    )
  const session = response.headers.get('mcp-session-id')
  if (session) await endSession(url, session, signal)
  const answer = events ? fromEvents(text) : parseJsonObject(text)
  const result = answer?.result
  const error = answer?.error as { code?: unknown; message?: unknown } | undefined
  if (error && typeof error === 'object')
    return {
      name: null,
      version: null,
      protocolVersion: null,
      refused: `${String(error.code)} ${String(error.message)}`,
    }
  if (!response.ok) throw new Error(`${url} answers initialize with HTTP ${response.status}: ${text.slice(0, 300)}`)
  if (!result || typeof result !== 'object')
    throw new Error(
      `${url} is not an MCP server: its answer to initialize is not a JSON-RPC result (${type || 'no content-type'}: ${text.slice(0, 200)})`,
    )
  const info = result as { serverInfo?: { name?: unknown; version?: unknown }; protocolVersion?: unknown }
  const str = (v: unknown) => (typeof v === 'string' ? v : null)
  return {
    name: str(info.serverInfo?.name),
    version: str(info.serverInfo?.version),
    protocolVersion: str(info.protocolVersion),
  }
}

/** A fetch failure's cause (ECONNREFUSED, a timeout) is what the person needs, not "fetch failed". */
function reason(error: unknown): string {
  const e = error as { message?: string; cause?: { code?: string; message?: string } }
  if (e.cause) return e.cause.code ?? e.cause.message ?? String(e.cause)
  return e.message ?? String(error)
}

/** The body, up to {@link MAX_ANSWER_BYTES}; an event stream only until the answer to id 1 is in it. */
async function readCapped(response: Response, events: boolean): Promise<string> {
  if (!response.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  // Leaving the loop cancels the body: a stream a server keeps open after the result is not waited out.
  for await (const chunk of response.body) {
    chunks.push(chunk)
    size += chunk.byteLength
    if (size > MAX_ANSWER_BYTES) break
    if (events && fromEvents(Buffer.concat(chunks).toString('utf8'))) break
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The JSON-RPC answer to id 1 among the events of an SSE body. */
function fromEvents(text: string): Record<string, unknown> | undefined {
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n')
    const message = parseJsonObject(data)
    if (message?.id === 1) return message
  }
  return undefined
}

/** The probe's session is nobody's: ended so the server does not keep it until its idle timeout. */
async function endSession(url: string, session: string, signal: AbortSignal): Promise<void> {
  try {
    const r = await fetch(url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL },
      redirect: 'manual',
      signal,
    })
    await r.body?.cancel()
  } catch {
    // A server that keeps sessions until they idle out is still a server: the suite judges the rest.
  }
}
