import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { connect } from 'node:net'
import { Client } from '@modelcontextprotocol/client'
import type { Sandbox } from 'agentcli/testing'
import { tasksServer } from './cold-tasks.js'
import { alive, useSharedServer } from './helpers.js'

/** A `<bin> mcp --http` process this test started, and the URL its log line named. */
export type HttpServer = {
  url: string
  child: ChildProcess
  stderr(): string
  /** Resolves with the exit code and stdout once the process has exited. */
  exited: Promise<{ code: number | null; stdout: string }>
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stdout: string }>
}

/** Start `<bin> mcp --http --port 0 …` in the sandbox; resolves once it listens (or rejects with its envelope). */
export function startHttp(box: Sandbox, args: string[] = [], env: Record<string, string> = {}): Promise<HttpServer> {
  // The example, or its copy without warm processes in a file that asked for it (cold-tasks.ts).
  const example = tasksServer()
  const child = spawn(process.execPath, [example.bin, 'mcp', '--http', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...example.env, ...box.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  let out = ''
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8')
  })
  const exited = new Promise<{ code: number | null; stdout: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout: out })),
  )
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      log += c.toString('utf8')
      const m = /mcp: listening on (http:\/\/\S+)/.exec(log)
      if (m)
        resolve({
          url: m[1]!,
          child,
          stderr: () => log,
          exited,
          stop: async (signal = 'SIGTERM') => {
            // Its warm processes (src/mcp/pool.ts) end on their own once its channel closes, even after a SIGKILL;
            // one still starting may yet touch the sandbox, so wait for them by PID before it is removed.
            const warm = child.pid === undefined ? [] : childrenOf(child.pid)
            if (child.exitCode === null && child.signalCode === null) child.kill(signal)
            const result = await exited
            const end = Date.now() + 20_000
            while (warm.some(alive) && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
            return result
          },
        })
    })
    void exited.then(({ code, stdout }) =>
      reject(Object.assign(new Error(`exited ${code}: ${stdout}${log}`), { code, stdout })),
    )
  })
}

/**
 * One sandbox and one `<bin> mcp --http` for all the tests of the describe (or file) it is called in, for tests that
 * need no fresh server (HTTP is stateless: each request, whatever its era, is served alike). `setup` prepares the
 * sandbox and returns the server's arguments. The server has stopped, its warm processes too, before the sandbox goes.
 */
export function useSharedHttp(setup: (box: Sandbox) => string[] | undefined = () => undefined): () => {
  box: Sandbox
  server: HttpServer
} {
  return useSharedServer(
    'server',
    async (box) => ({ server: await startHttp(box, setup(box) ?? []) }),
    ({ server }) => server.stop(),
  )
}

/** The official client connected over Streamable HTTP (2025-11-25 handshake, or the 2026-07-28 revision pinned). */
export async function httpClient(
  url: string,
  options: { modern?: boolean; token?: string; elicit?: (params: never) => unknown } = {},
): Promise<Client> {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client')
  const client = new Client(
    { name: 'agentcli-test', version: '1.0.0' },
    {
      ...(options.elicit ? { capabilities: { elicitation: { form: {}, url: {} } } } : {}),
      ...(options.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  )
  if (options.elicit) {
    const answer = options.elicit
    client.setRequestHandler('elicitation/create', async (request) => (await answer(request.params as never)) as never)
  }
  const token = options.token
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), token ? { authProvider: { token: async () => token } } : {}),
  )
  return client
}

/** A request that keeps its socket open: its answer's head, and the end of the connection, each when it comes. */
export type SlowRequest = {
  /** The answer's status and raw text so far, once its head has arrived. */
  answer: Promise<{ status: number; text: string }>
  /** Everything received, once the server has closed the connection. */
  closed: Promise<{ text: string }>
}

/**
 * A POST to `url` over a socket of its own that sends its headers and only `sent` of the body they declare, then
 * nothing more (or, given `trickleMs`, a space every `trickleMs`, so the connection is never idle), and never closes
 * its side. Each promise rejects when it has not come `withinMs` after the start; the socket is then destroyed (by
 * this test, which made it).
 */
export function slowRequest(
  url: string,
  headers: Record<string, string>,
  sent: string,
  withinMs: number,
  trickleMs?: number,
): SlowRequest {
  const { hostname, port, pathname } = new URL(url)
  const head = Object.entries({ host: `${hostname}:${port}`, 'content-type': 'application/json', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  let text = ''
  const socket = connect(Number(port), hostname, () => socket.write(`POST ${pathname} HTTP/1.1\r\n${head}\r\n${sent}`))
  // A reset after the answer (the server closing with bytes unread) ends it as a close does.
  socket.on('error', () => undefined)
  const trickle = trickleMs ? setInterval(() => socket.writable && socket.write(' '), trickleMs) : undefined
  socket.once('close', () => clearInterval(trickle))
  const late = (what: string) => new Error(`${what} had not come after ${withinMs} ms; got: ${JSON.stringify(text)}`)
  const closed = new Promise<{ text: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy()
      reject(late('the close'))
    }, withinMs)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve({ text })
    })
  })
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const done = () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)
      if (status && text.includes('\r\n\r\n')) resolve({ status: Number(status[1]), text })
    }
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8')
      done()
    })
    closed.then(() => reject(late('an answer')), reject)
  })
  // Whichever a test does not await must not be an unhandled rejection.
  answer.catch(() => undefined)
  closed.catch(() => undefined)
  return { answer, closed }
}

/** A process's own children right now (Linux `ps`, which exits 1 when there is none). */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0)
  } catch {
    return []
  }
}
