import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import type { Target } from './call.js'

/** A JSON-RPC answer of the server under test. */
export type RpcAnswer = { result?: Record<string, unknown>; error?: { code: number; message: string } }

/**
 * A minimal MCP client over stdio for `verify --mcp`: the verifier ships without the client SDK, and a black box
 * is best checked with as little machinery as possible. It speaks the 2025-11-25 handshake (`initialize`), which
 * the SDK still serves, and declares no capabilities, so the server can never ask a person anything.
 */
export class McpProbe {
  private readonly child: ChildProcessWithoutNullStreams
  private buffer = ''
  private nextId = 1
  private readonly waiting = new Map<number, (answer: RpcAnswer) => void>()
  private stderr = ''
  private exited = false

  constructor(
    private readonly t: Target,
    args: readonly string[] = ['mcp'],
  ) {
    const [bin, ...pre] = t.command
    this.child = spawn(bin!, [...pre, ...args], { env: t.env, cwd: t.cwd, stdio: ['pipe', 'pipe', 'pipe'] })
    this.child.stdout.on('data', (c: Buffer) => this.onData(c.toString('utf8')))
    this.child.stderr.on('data', (c: Buffer) => {
      if (this.stderr.length < 4000) this.stderr += c.toString('utf8')
    })
    this.child.on('close', () => {
      this.exited = true
      for (const resolve of this.waiting.values()) resolve({ error: { code: -1, message: 'server exited' } })
      this.waiting.clear()
    })
    this.child.on('error', () => undefined)
    // A server that exits while a request is being written (EPIPE) is answered by 'close' above ("server exited"),
    // not an unhandled stream error that would end verify itself with E_INTERNAL.
    this.child.stdin.on('error', () => undefined)
  }

  private onData(text: string): void {
    this.buffer += text
    let nl = this.buffer.indexOf('\n')
    while (nl !== -1) {
      const line = this.buffer.slice(0, nl)
      this.buffer = this.buffer.slice(nl + 1)
      nl = this.buffer.indexOf('\n')
      let message: { id?: number; result?: Record<string, unknown>; error?: RpcAnswer['error'] }
      try {
        message = JSON.parse(line)
      } catch {
        continue
      }
      const resolve = message.id === undefined ? undefined : this.waiting.get(message.id)
      if (!resolve) continue
      this.waiting.delete(message.id!)
      resolve({
        ...(message.result ? { result: message.result } : {}),
        ...(message.error ? { error: message.error } : {}),
      })
    }
  }

  /** Send one request; a server that stays silent past the target's timeout answers with an error. */
  request(method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
    if (this.exited) return Promise.resolve({ error: { code: -1, message: 'server exited' } })
    const id = this.nextId++
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        resolve({ error: { code: -2, message: `no answer to ${method} within ${this.t.timeoutMs} ms` } })
      }, this.t.timeoutMs)
      this.waiting.set(id, (answer) => {
        clearTimeout(timer)
        resolve(answer)
      })
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  }

  /** The handshake of the 2025-11-25 revision. */
  async initialize(): Promise<RpcAnswer> {
    const answer = await this.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'agentcli-verify', version: '1' },
    })
    if (answer.result)
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
    return answer
  }

  /** The opening of the 2026-07-28 revision: `server/discover`, with the per-request envelope in `_meta`. */
  discover(): Promise<RpcAnswer> {
    return this.request('server/discover', {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'agentcli-verify', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    })
  }

  /** Every tool the server lists, all pages walked. */
  async listTools(): Promise<{ tools: Array<Record<string, unknown>>; error?: string }> {
    const tools: Array<Record<string, unknown>> = []
    let cursor: string | undefined
    for (let page = 0; page < 100; page++) {
      const answer = await this.request('tools/list', cursor ? { cursor } : {})
      if (!answer.result) return { tools, error: answer.error?.message ?? 'no result' }
      tools.push(...((answer.result.tools as Array<Record<string, unknown>>) ?? []))
      cursor = answer.result.nextCursor as string | undefined
      if (!cursor) break
    }
    return { tools }
  }

  /** Call one tool. */
  callTool(name: string, args: Record<string, unknown>): Promise<RpcAnswer> {
    return this.request('tools/call', { name, arguments: args })
  }

  /** What the server wrote on stderr (for evidence). */
  log(): string {
    return this.stderr
  }

  /** Close stdin (the stdio way to end a session) and make sure the process is gone. */
  close(): void {
    this.child.stdin.end()
    const pid = this.child.pid
    setTimeout(() => {
      if (!this.exited && pid !== undefined) this.child.kill('SIGKILL')
    }, 2000).unref()
  }
}
