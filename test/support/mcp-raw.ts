import { type ChildProcess, spawn } from 'node:child_process'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

/*
 * Raw JSON-RPC on the 2026-07-28 revision, for what the official client does not speak yet: the tasks extension
 * (client 2.4 refuses a `resultType: "task"` answer). Over stdio through the SDK's own transport, over HTTP with
 * the standard headers a 2026 client sends.
 */

/** What a raw request answers: the JSON-RPC result or error (and the HTTP status, over HTTP). */
// biome-ignore lint/suspicious/noExplicitAny: results are read loosely in assertions
export type Answer = { result?: any; error?: { code: number; message: string; data?: any }; status?: number }

/** Options of one raw request. */
export type RpcOptions = {
  /** Declare the tasks extension in this request's capabilities (default true). */
  tasks?: boolean
  /** More client capabilities for this request (`elicitation`, say). */
  capabilities?: Record<string, unknown>
  /** HTTP only: headers over the standard ones (`Mcp-Name` to forge a mismatch, say). */
  headers?: Record<string, string>
}

/** A raw requester. */
export type Rpc = (method: string, params?: Record<string, unknown>, options?: RpcOptions) => Promise<Answer>

const EXT = 'io.modelcontextprotocol/tasks'

function meta(options: RpcOptions): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'agentcli-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {
      ...options.capabilities,
      ...((options.tasks ?? true) ? { extensions: { [EXT]: {} } } : {}),
    },
  }
}

/** `<bin> mcp` on stdio, spoken to raw. */
export async function stdioRpc(
  bin: string,
  env: Record<string, string>,
): Promise<{
  rpc: Rpc
  stderr(): string
  close(): Promise<void>
  /** Every message the server sent that answers no request of `rpc` (notifications, a listen's end), in order. */
  unsolicited(): Record<string, unknown>[]
  /** Send a raw message as it is (a request whose answer `rpc` does not wait for, a notification). */
  send(message: Record<string, unknown>): Promise<void>
}> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp'], env, stderr: 'pipe' })
  let log = ''
  transport.stderr?.on('data', (c: Buffer) => {
    log += c.toString('utf8')
  })
  const pending = new Map<number, (a: Answer) => void>()
  const others: Record<string, unknown>[] = []
  transport.onmessage = (message) => {
    const m = message as { id?: number } & Answer
    if (typeof m.id === 'number' && pending.has(m.id)) {
      pending.get(m.id)!({
        ...('result' in m ? { result: m.result } : {}),
        ...('error' in m ? { error: m.error } : {}),
      })
      pending.delete(m.id)
    } else others.push(message as Record<string, unknown>)
  }
  await transport.start()
  let next = 0
  const rpc: Rpc = (method, params = {}, options = {}) =>
    new Promise((resolve) => {
      const id = ++next
      pending.set(id, resolve)
      void transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(options) } })
    })
  return {
    rpc,
    stderr: () => log,
    close: () => transport.close(),
    unsolicited: () => others,
    send: (message) => transport.send(message as never),
  }
}

/** The `_meta` of a raw 2026-07-28 request (`tasks`: declare the tasks extension, as {@link Rpc} does by default). */
export function requestMeta(options: RpcOptions = {}): Record<string, unknown> {
  return meta(options)
}

/** A requester against a Streamable HTTP endpoint, with a bearer token when given. */
export function httpRpc(url: string, token?: string): Rpc {
  let next = 0
  return async (method, params = {}, options = {}) => {
    const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...options.headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++next,
        method,
        params: { ...params, _meta: meta(options) },
      }),
    })
    const text = await res.text()
    // A JSON body, or an SSE stream whose last `data:` line is the response.
    const body = text.startsWith('{')
      ? text
      : (text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .pop() ?? '{}')
    const parsed = JSON.parse(body) as Answer
    return {
      ...('result' in parsed ? { result: parsed.result } : {}),
      ...('error' in parsed ? { error: parsed.error } : {}),
      status: res.status,
    }
  }
}

/** A `<bin> mcp --http --port 0` process; resolves once it listens. */
export function startMcpHttp(
  bin: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ url: string; child: ChildProcess; stderr(): string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [bin, 'mcp', '--http', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      log += c.toString('utf8')
      const m = /mcp: listening on (http:\/\/\S+)/.exec(log)
      if (m)
        resolve({
          url: m[1]!,
          child,
          stderr: () => log,
          stop: () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
            return exited
          },
        })
    })
    void exited.then(() => reject(new Error(`mcp --http exited: ${log}`)))
  })
}

/** Poll `tasks/get` until the task's status satisfies `done` (or `ms` pass). */
export async function pollTask(
  rpc: Rpc,
  taskId: string,
  done: (status: string) => boolean,
  ms = 30_000,
): Promise<Answer> {
  const deadline = Date.now() + ms
  for (;;) {
    const got = await rpc('tasks/get', { taskId })
    if (got.error || done(got.result.status)) return got
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${got.result.status}`)
    await new Promise((r) => setTimeout(r, 150))
  }
}
