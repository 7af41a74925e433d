import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
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
