import { createHash, generateKeyPairSync, sign } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { UnauthorizedError } from '@modelcontextprotocol/client'
import type { Sandbox } from 'agentcli/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeRequest } from '../../../src/approvals/request.js'
import { fileApprovalStore } from '../../../src/approvals/store.js'
import { useColdTasks } from '../../support/cold-tasks.js'
import {
  alive,
  env,
  seed,
  storeBytes,
  storePath,
  tasks,
  until,
  useSandbox,
  useSharedServer,
} from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'
import { type HttpServer, httpClient, slowRequest, startHttp, useSharedHttp } from '../../support/mcp-http.js'
import { openSession, sc, withoutDuration } from '../../support/mcp-session.js'
import { sshKeys, sshSign } from '../../support/ssh-keys.js'

// Not about the warm pool: the servers start none (cold-tasks.ts).
useColdTasks()

/** An upstream that accepts connections and never answers: a call waiting on it stays in flight. */
async function silentUpstream(): Promise<{ url: string; held: Array<{ destroy(): void }>; close(): Promise<void> }> {
  const held: Array<{ destroy(): void }> = []
  const upstream: Server = createServer((req) => held.push(req.socket))
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`,
    held,
    close: async () => {
      for (const socket of held) socket.destroy()
      await new Promise((r) => upstream.close(r))
    },
  }
}

const servers: HttpServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL')
})

/** The exit code and envelope of a `mcp --http` that refuses to start; one that starts is stopped, failing the test. */
async function refusedToStart(
  box: Sandbox,
  args: string[],
): Promise<{ code: number | null; envelope: { error: { code: string; message: string } } }> {
  const outcome = await startHttp(box, args).then(
    (server) => {
      servers.push(server)
      return undefined
    },
    (error: { code: number | null; stdout: string }) => ({ code: error.code, envelope: JSON.parse(error.stdout) }),
  )
  expect(outcome, `it started with ${args.join(' ')}`).toBeDefined()
  return outcome!
}

/** A ping over fetch, with `headers` (a token); resolves with the response. */
function ping(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  })
}

// The tests that start the server with no argument share one (each era, each client, on one stateless endpoint):
// each seeds what it reads, and reads only its own part of the server's log.
const plain = useSharedHttp()

describe.each([
  ['2025-11-25 handshake', false],
  ['2026-07-28', true],
])('tool mcp --http (%s): the official client over Streamable HTTP', (_era, modern) => {
  const box = () => plain().box

  it('lists the tools and answers a call with the envelope the CLI prints; writes keep the gate', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const { server } = plain()
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = await httpClient(server.url, { modern })
    try {
      expect(client.getProtocolEra()).toBe(modern ? 'modern' : 'legacy')
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toContain('job_status')
      const r = await client.callTool({ name: 'get', arguments: { id: '1' } })
      expect(withoutDuration(sc(r))).toEqual(withoutDuration(env(await tasks(box(), ['get', '1']))))
      const refused = sc(await client.callTool({ name: 'create', arguments: { title: 'x' } }))
      expect(refused.error.code).toBe('E_CONFIRMATION_REQUIRED')
      const dry = sc(await client.callTool({ name: 'create', arguments: { title: 'x', dry_run: true } }))
      const done = sc(
        await client.callTool({ name: 'create', arguments: { title: 'x', confirm: dry.data.confirm_token } }),
      )
      expect(done.ok, JSON.stringify(done)).toBe(true)
      // The token is single-use across surfaces: the CLI cannot spend it again.
      const again = env(await tasks(box(), ['create', '--title', 'x', '--confirm', dry.data.confirm_token]))
      expect(again.error.code).toBe('E_CONFLICT')
    } finally {
      await client.close()
    }
  })
})

describe('tool mcp --http: one write gate with the CLI and stdio', () => {
  const box = () => plain().box

  it('without authentication a token minted on one surface confirms once on another; a replay anywhere is E_CONFLICT', async () => {
    rmSync(storePath(box()), { force: true })
    const { server } = plain()
    // Each era on the one endpoint: what one mints, the other spends.
    const legacy = await httpClient(server.url)
    const modern = await httpClient(server.url, { modern: true })
    const stdio = await openSession(box())
    const refused = (r: unknown) => {
      expect(sc(r).error?.code, JSON.stringify(sc(r))).toBe('E_CONFLICT')
      expect(sc(r).error.details.reason).toBe('already_used')
    }
    const create = (title: string, more: Record<string, unknown>) => ({ name: 'create', arguments: { title, ...more } })
    try {
      // HTTP → CLI; then neither stdio nor HTTP spends it again.
      let token = sc(await legacy.callTool(create('http-to-cli', { dry_run: true }))).data.confirm_token as string
      expect(env(await tasks(box(), ['create', '--title', 'http-to-cli', '--confirm', token])).ok).toBe(true)
      refused(await stdio.client.callTool(create('http-to-cli', { confirm: token })))
      refused(await modern.callTool(create('http-to-cli', { confirm: token })))
      // CLI → HTTP; then not stdio.
      token = env(await tasksInProcess(box(), ['create', '--title', 'cli-to-http', '--dry-run'])).data.confirm_token
      expect(sc(await modern.callTool(create('cli-to-http', { confirm: token }))).ok).toBe(true)
      refused(await stdio.client.callTool(create('cli-to-http', { confirm: token })))
      // stdio → HTTP; then not stdio.
      token = sc(await stdio.client.callTool(create('stdio-to-http', { dry_run: true }))).data.confirm_token
      expect(sc(await legacy.callTool(create('stdio-to-http', { confirm: token }))).ok).toBe(true)
      refused(await stdio.client.callTool(create('stdio-to-http', { confirm: token })))
      // Each applied exactly once.
      expect(
        env(await tasksInProcess(box(), ['list']))
          .data.items.map((t: { title: string }) => t.title)
          .sort(),
      ).toEqual(['cli-to-http', 'http-to-cli', 'stdio-to-http'])
    } finally {
      await legacy.close()
      await modern.close()
      await stdio.close()
    }
  })
})

describe('tool mcp --http: a person in the loop', () => {
  const box = () => plain().box

  it('2026-07-28: a write is approved through elicitation and a checkpoint resumes, both over HTTP', async () => {
    const { server } = plain()
    const from = server.stderr().length
    const log = () => server.stderr().slice(from)
    const asked: string[] = []
    const client = await httpClient(server.url, {
      modern: true,
      elicit: (async (p: { message: string }) => {
        asked.push(p.message)
        const code = /(?:code|approve) ([0-9A-F]{8})/.exec(p.message)?.[1]
        if (code) {
          expect(env(await tasksInProcess(box(), ['login', 'approve', code])).ok).toBe(true)
          return { action: 'accept', content: { done: true } }
        }
        return { action: 'accept', content: { approve: true } }
      }) as never,
    })
    try {
      const created = sc(await client.callTool({ name: 'create', arguments: { title: 'approved' } }))
      expect(created.ok, JSON.stringify(created)).toBe(true)
      expect(created.data.title).toBe('approved')
      const login = sc(await client.callTool({ name: 'login', arguments: {} }))
      expect(login.ok, JSON.stringify(login)).toBe(true)
      expect(asked).toHaveLength(2)
      expect(log().match(/mcp: login \(pid/g)).toHaveLength(1)
      expect(log()).toMatch(/mcp: login resume --id cp_/)
    } finally {
      await client.close()
    }
  })

  it('2025-11-25 over stateless HTTP never asks (the answer could not come back): the plain gate answers', async () => {
    const { server } = plain()
    const asked: unknown[] = []
    const client = await httpClient(server.url, {
      elicit: ((p: unknown) => {
        asked.push(p)
        return { action: 'accept', content: { approve: true } }
      }) as never,
    })
    try {
      const r = sc(await client.callTool({ name: 'create', arguments: { title: 'x' } }))
      expect(r.error.code).toBe('E_CONFIRMATION_REQUIRED')
      expect(asked).toHaveLength(0)
    } finally {
      await client.close()
    }
  })
})

/**
 * The remote tasks API `sync` reads: one page with one task. While `hold` is on, a request is kept unanswered (its
 * socket in `held`): a `sync` reading it stays in its plan.
 */
async function remoteTasks(): Promise<{
  url: string
  held: Array<{ destroy(): void }>
  hold(on: boolean): void
  close(): Promise<void>
}> {
  const held: Array<{ destroy(): void }> = []
  let holding = false
  const upstream: Server = createServer((req, res) => {
    if (holding) return void held.push(req.socket)
    res.setHeader('content-type', 'application/json')
    res.end(
      JSON.stringify({
        items: [{ id: 'r1', title: 'remote one', status: 'open', updated_at: '2026-01-01T00:00:00.000Z' }],
        next_cursor: null,
      }),
    )
  })
  upstream.keepAliveTimeout = 0
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
  const release = () => {
    for (const socket of held.splice(0)) socket.destroy()
  }
  return {
    url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`,
    held,
    hold: (on) => {
      holding = on
      if (!on) release()
    },
    close: async () => {
      release()
      upstream.closeAllConnections()
      await new Promise((r) => upstream.close(r))
    },
  }
}

describe('tool mcp --http: a call the client cancels', () => {
  // One server, its calls reading the remote API above with an injected credential.
  let upstream: Awaited<ReturnType<typeof remoteTasks>> | undefined
  const syncing = useSharedServer(
    'server',
    async (box) => {
      upstream = await remoteTasks()
      return {
        server: await startHttp(box, [], {
          TASKS_API_URL: upstream.url,
          TASKS_TOKEN: 'tok-sync-0123456789',
          TASKS_ACCOUNT: 'me',
          TASKS_HTTP_TIMEOUT_MS: '60000',
        }),
      }
    },
    async ({ server }) => {
      await server.stop()
      await upstream?.close()
    },
  )

  // The 2026-07-28 revision cancels by closing the request's response; a 2025-11-25 client sends
  // notifications/cancelled in a request of its own, matched to the call by the session id its handshake was given.
  it.each([
    ['2025-11-25', false],
    ['2026-07-28', true],
  ])(
    '%s: aborting a confirmed write in its plan stops its process; nothing is applied and the token confirms later, once',
    async (_era, modern) => {
      const { box, server } = syncing()
      const remote = upstream!
      const state = join(box.env.XDG_DATA_HOME!, 'tasks', 'sync-state.json')
      rmSync(storePath(box), { force: true })
      rmSync(state, { force: true })
      const from = server.stderr().length
      const client = await httpClient(server.url, { modern })
      try {
        const dry = sc(await client.callTool({ name: 'sync', arguments: { dry_run: true } }))
        expect(dry.ok, JSON.stringify(dry)).toBe(true)
        const token = dry.data.confirm_token as string
        remote.hold(true)
        const controller = new AbortController()
        const pending = client.callTool({ name: 'sync', arguments: { confirm: token } }, { signal: controller.signal })
        // The confirmed call is in its plan: its process runs and its request to the remote API waits.
        const pid = await until(() => {
          const m = /mcp: sync --confirm \S+ \(pid (\d+)\)/.exec(server.stderr().slice(from))
          return m && remote.held.length > 0 ? Number(m[1]) : undefined
        })
        expect(alive(pid)).toBe(true)
        controller.abort()
        await expect(pending).rejects.toThrow()
        await until(() => (alive(pid) ? undefined : true))
        remote.hold(false)
        // Nothing applied: no task, no mapping; the token was given back, so it confirms now, once.
        expect(storeBytes(box)).toBe('<absent>')
        expect(existsSync(state)).toBe(false)
        const done = sc(await client.callTool({ name: 'sync', arguments: { confirm: token } }))
        expect(done.ok, JSON.stringify(done)).toBe(true)
        expect(done.data).toEqual({ created: 1, updated: 0, unchanged: 0 })
        const again = sc(await client.callTool({ name: 'sync', arguments: { confirm: token } }))
        expect(again.error.code).toBe('E_CONFLICT')
        expect(again.error.details.reason).toBe('already_used')
        expect(env(await tasksInProcess(box, ['list'])).data.items.map((t: { title: string }) => t.title)).toEqual([
          'remote one',
        ])
      } finally {
        remote.hold(false)
        await client.close()
      }
    },
  )
  it("2025-11-25: a cancel names the call within its session only: another session's cancel of the same id stops nothing", async () => {
    const { box, server } = syncing()
    const remote = upstream!
    rmSync(storePath(box), { force: true })
    rmSync(join(box.env.XDG_DATA_HOME!, 'tasks', 'sync-state.json'), { force: true })
    const from = server.stderr().length
    const sdk = await httpClient(server.url)
    const token = sc(await sdk.callTool({ name: 'sync', arguments: { dry_run: true } })).data.confirm_token as string
    await sdk.close()
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const post = (body: unknown, extra: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(server.url, {
        method: 'POST',
        headers: { ...headers, ...extra },
        body: JSON.stringify(body),
        signal: signal ?? null,
      })
    // Two handshakes: two sessions, each id fresh; the 2026-07-28 revision has no handshake and gets none.
    const hello = (name: string) =>
      post({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1.0.0' } },
      })
    const [mine, theirs] = await Promise.all([hello('mine'), hello('theirs')])
    const session = mine.headers.get('mcp-session-id')
    const other = theirs.headers.get('mcp-session-id')
    await Promise.all([mine.text(), theirs.text()])
    expect(session).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(other).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(other).not.toBe(session)
    const legacy = (id: string) => ({ 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' })
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, legacy(session!))).text()
    remote.hold(true)
    const gone = new AbortController()
    const call = post(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sync', arguments: { confirm: token } } },
      legacy(session!),
      gone.signal,
    ).then((r) => r.text())
    try {
      const pid = await until(() => {
        const m = /mcp: sync --confirm \S+ \(pid (\d+)\)/.exec(server.stderr().slice(from))
        return m && remote.held.length > 0 ? Number(m[1]) : undefined
      })
      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }
      // The other session's client also has a request 1; a cancel without a session, or naming the id as a string.
      for (const [extra, body] of [
        [legacy(other!), cancel],
        [{ 'mcp-protocol-version': '2025-11-25' }, cancel],
        [legacy(session!), { ...cancel, params: { requestId: '1' } }],
      ] as const)
        expect((await post(body, extra)).status).toBe(202)
      // Each was taken (202) before the next: had any stopped the call, its SIGINT was already sent.
      expect(alive(pid)).toBe(true)
      expect(storeBytes(box)).toBe('<absent>')
      expect((await post(cancel, legacy(session!))).status).toBe(202)
      await until(() => (alive(pid) ? undefined : true))
      expect(storeBytes(box)).toBe('<absent>')
    } finally {
      remote.hold(false)
      gone.abort()
      await call.catch(() => undefined)
    }
  })
})

describe('tool mcp --http: what is refused before the SDK sees a request', () => {
  const box = useSandbox()

  it('a Host or Origin naming another site (DNS rebinding) is 403; the listener and localhost are served', async () => {
    const { server } = plain()
    const port = new URL(server.url).port
    const post = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
    // fetch sets Host from the URL; a rebinding page's request carries its own name, as a raw request shows.
    const raw = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: { host, 'content-type': 'application/json' },
          },
          (res) => {
            res.resume()
            resolve(res.statusCode!)
          },
        )
        req.once('error', reject)
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))
      })
    expect(await raw(`evil.example:${port}`)).toBe(403)
    expect((await post({ origin: 'http://evil.example' })).status).toBe(403)
    expect((await post({ origin: 'null' })).status).toBe(403)
    expect((await post({ origin: `http://localhost:${port}` })).status).not.toBe(403)
    expect(await raw(`localhost:${port}`)).not.toBe(403)
  })

  it('an MCP-Protocol-Version the SDK does not speak is 400; a body over the limit 413; another path 404', async () => {
    const { server } = plain()
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
      })
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })
    const bad = await post(ping, { 'mcp-protocol-version': '1999-01-01' })
    expect(bad.status).toBe(400)
    const answer = (await bad.json()) as { error: { message: string } }
    expect(answer.error.message).toMatch(/protocol version/i)
    const big = await post(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${'a'.repeat(5 * 1024 * 1024)}"}}`)
    expect(big.status).toBe(413)
    expect((await fetch(server.url.replace('/mcp', '/other'))).status).toBe(404)
    // Still serving.
    const client = await httpClient(server.url)
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    await client.close()
  })

  it('past --max-concurrent a request is 503 with Retry-After while the others run', async () => {
    const upstream = await silentUpstream()
    const server = await startHttp(box(), ['--max-concurrent', '1'], {
      TASKS_API_URL: upstream.url,
      TASKS_HTTP_TIMEOUT_MS: '60000',
    })
    servers.push(server)
    const client = await httpClient(server.url, { modern: true })
    try {
      const pending = client.callTool({ name: 'login', arguments: {} }).catch((e: unknown) => e)
      await until(() => (/mcp: login \(pid \d+\)/.test(server.stderr()) && upstream.held.length > 0 ? true : undefined))
      const busy = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
      expect(busy.status).toBe(503)
      expect(busy.headers.get('retry-after')).toBe('1')
      await server.stop('SIGTERM')
      await pending
    } finally {
      await client.close().catch(() => undefined)
      await upstream.close()
    }
  })

  it('SIGTERM: a call in flight answers its own E_INTERRUPTED, its process is gone, the server exits', async () => {
    const upstream = await silentUpstream()
    const server = await startHttp(box(), [], { TASKS_API_URL: upstream.url, TASKS_HTTP_TIMEOUT_MS: '60000' })
    servers.push(server)
    const client = await httpClient(server.url, { modern: true })
    try {
      const pending = client.callTool({ name: 'login', arguments: {} })
      const pid = await until(() => {
        const m = /mcp: login \(pid (\d+)\)/.exec(server.stderr())
        return m && upstream.held.length > 0 ? Number(m[1]) : undefined
      })
      server.child.kill('SIGTERM')
      const r = sc(await pending)
      expect(r.error.code).toBe('E_INTERRUPTED')
      expect(alive(pid)).toBe(false)
      const { code } = await server.exited
      expect(code).not.toBeNull()
    } finally {
      await client.close().catch(() => undefined)
      await upstream.close()
    }
  })

  it('SIGTERM while a body is still arriving: that request is cut, no call starts for it, the server exits at once', async () => {
    const server = await startHttp(box(), [])
    servers.push(server)
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'create', arguments: { title: 'after-sigterm', dry_run: true } },
    })
    // Half the body now; the rest would come after the stop.
    const slow = slowRequest(
      server.url,
      { 'content-length': String(call.length), accept: 'application/json, text/event-stream' },
      call.slice(0, 20),
      60_000,
    )
    await until(() => (server.stderr().includes('listening') ? true : undefined))
    const stopped = Date.now()
    server.child.kill('SIGTERM')
    await slow.closed
    const { code } = await server.exited
    expect(code).not.toBeNull()
    // Cut at the stop, not after the body's 10 s deadline.
    expect(Date.now() - stopped).toBeLessThan(8_000)
    expect(server.stderr()).not.toMatch(/mcp: create/)
  })

  it('without authentication, a request a proxy forwarded is 403 naming the header', async () => {
    const { server } = plain()
    const post = (url: string, headers: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
    for (const [header, value] of [
      ['x-forwarded-for', '203.0.113.7'],
      ['forwarded', 'for=203.0.113.7;proto=https'],
      ['x-forwarded-host', 'mcp.example.com'],
      ['x-real-ip', '203.0.113.7'],
    ] as const) {
      const res = await post(server.url, { [header]: value })
      expect(res.status, header).toBe(403)
      expect(((await res.json()) as { error: string }).error).toContain(`forwarded by a proxy (${header})`)
    }
  })

  it('a listener off loopback without authentication does not start: E_CONFIG', async () => {
    const run = await tasks(box(), ['mcp', '--http', '--host', '0.0.0.0', '--port', '0'])
    expect(run.code).toBe(4)
    expect(env(run).error.code).toBe('E_CONFIG')
    expect(env(run).error.message).toContain('authentication')
  })

  // Behind a reverse proxy the listener is on loopback, yet the public URL's callers reach it through the proxy.
  it.each([
    [
      'a public URL and its allowed host',
      ['--public-url', 'https://mcp.example.com/mcp', '--allowed-host', 'mcp.example.com'],
    ],
    ['a public URL', ['--public-url', 'https://mcp.example.com/mcp']],
    ['an allowed host', ['--allowed-host', 'localhost', '--allowed-host', 'mcp.example.com']],
  ])('%s off loopback without authentication does not start: E_CONFIG naming the flags to add', async (_what, args) => {
    const { code, envelope } = await refusedToStart(box(), args)
    expect(code).toBe(4)
    expect(envelope.error.code).toBe('E_CONFIG')
    expect(envelope.error.message).toContain('--auth-issuer or --auth-tokens')
    expect(envelope.error.message).toContain('mcp.example.com')
  })

  it('loopback names only, in the public URL and the allowed hosts, start without authentication', async () => {
    const server = await startHttp(box(), ['--public-url', 'http://localhost:8765/mcp', '--allowed-host', '127.0.0.2'])
    servers.push(server)
    expect((await ping(server.url)).status).toBe(200)
  })

  it('--auth-issuer on a wildcard listener without --public-url or --auth-audience does not start (no token names 0.0.0.0); with --public-url it does', async () => {
    const issuer = ['--host', '0.0.0.0', '--auth-issuer', 'https://auth.example.com']
    const { code, envelope } = await refusedToStart(box(), issuer)
    expect(code).toBe(4)
    expect(envelope.error.code).toBe('E_CONFIG')
    expect(envelope.error.message).toContain('--public-url')
    const server = await startHttp(box(), [...issuer, '--public-url', 'https://mcp.example.com/mcp'])
    servers.push(server)
    expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/mcp$/)
  })

  it('without authentication too, a body that does not arrive within its deadline is 408 and its connection closed', async () => {
    const { server } = plain()
    // Declares 100 bytes, sends 5: its deadline is 10 s (http-body.ts); the bound leaves a loaded machine room.
    const slow = slowRequest(server.url, { 'content-length': '100' }, '{"jso', 60_000)
    const answer = await slow.answer
    expect(answer.status, answer.text).toBe(408)
    expect(answer.text).toContain('did not arrive within 10 s')
    await slow.closed
    expect((await ping(server.url)).status).toBe(200)
  }, 90_000)
})

/**
 * Five tasks, and an operator policy naming `approvers` (`trust`) on the shared server's home: a delete of four is
 * held by the example's bulk-delete rule. `dispose` removes the policy and the keys (the other tests share the home).
 */
function heldDeletes(box: Sandbox) {
  const configDir = join(box.env.XDG_CONFIG_HOME!, 'tasks')
  const policy = join(configDir, 'policy.json')
  seed(
    box,
    ['1', '2', '3', '4', '5'].map((id) => ({ id, title: `t${id}` })),
  )
  mkdirSync(configDir, { recursive: true, mode: 0o700 })
  const keys = sshKeys()
  return {
    dataDir: join(box.env.XDG_DATA_HOME!, 'tasks'),
    keys,
    trust: (approvers: Array<Record<string, unknown>>) =>
      writeFileSync(policy, JSON.stringify({ approvers }), { mode: 0o600 }),
    dispose: () => {
      keys.dispose()
      rmSync(policy, { force: true })
    },
  }
}

describe('tool mcp --http with bearer authentication: the subject is the principal', () => {
  const box = useSandbox()
  const tokensIn = (b: Sandbox) => {
    const path = join(b.root, 'tokens')
    const sha = (t: string) => createHash('sha256').update(t).digest('hex')
    writeFileSync(path, `sha256:${sha('tok-ann')} ann\nsha256:${sha('tok-bob')} bob\n`, { mode: 0o600 })
    return path
  }
  const tokens = () => tokensIn(box())
  // The tests of a server started with just the token list share one.
  const authed = useSharedHttp((b) => ['--auth-tokens', tokensIn(b)])

  it('a request a proxy forwarded is served: behind a proxy the token is what admits it', async () => {
    const { server } = authed()
    const client = await httpClient(server.url, { token: 'tok-ann' })
    await client.close()
    const served = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-forwarded-for': '203.0.113.7',
        authorization: 'Bearer tok-ann',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    })
    expect(served.status).toBe(200)
    await served.text()
  })

  it('no token or an unknown one is 401 with WWW-Authenticate naming the RFC 9728 metadata, which is served', async () => {
    const { server } = authed()
    const post = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
    for (const headers of [{}, { authorization: 'Bearer tok-eve' }, { authorization: 'Basic dG9rLWFubg==' }]) {
      const r = await post(headers)
      expect(r.status, JSON.stringify(headers)).toBe(401)
      expect(r.headers.get('www-authenticate')).toContain(
        `resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', server.url).href}"`,
      )
    }
    const meta = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.url))
    expect(meta.status).toBe(200)
    expect(await meta.json()).toMatchObject({ resource: server.url, bearer_methods_supported: ['header'] })
    expect((await post({ authorization: 'Bearer tok-ann' })).status).toBe(200)
    await expect(httpClient(server.url, { token: 'tok-eve' })).rejects.toThrow()
  })

  it('a request without a valid token is 401 from its headers alone, its body unread: it holds no slot, and its connection closes past the deadline', async () => {
    const server = await startHttp(box(), ['--auth-tokens', tokens(), '--max-concurrent', '2'])
    servers.push(server)
    // Each declares a body of 100 kB and sends a byte of it every 200 ms: the answer cannot wait for the rest.
    const hostile = [{}, {}, { authorization: 'Bearer tok-eve' }].map((headers) =>
      slowRequest(server.url, { ...headers, 'content-length': '100000' }, '{"jso', 60_000, 200),
    )
    for (const { answer } of hostile) {
      const { status, text } = await answer
      expect(status, text).toBe(401)
      expect(text).toContain('invalid_token')
    }
    // Both slots are free: a caller with a token is served.
    expect((await ping(server.url, { authorization: 'Bearer tok-ann' })).status).toBe(200)
    // The rest of each body is dropped as it comes, never idle, until its deadline (11 s for 100 kB): then the
    // connection closes.
    for (const { closed } of hostile) await closed
  }, 90_000)

  it('a body with a valid token has a deadline too: 408 and closed, its slot freed; a long call in flight is not cut', async () => {
    const upstream = await silentUpstream()
    const server = await startHttp(box(), ['--auth-tokens', tokens(), '--max-concurrent', '2'], {
      TASKS_API_URL: upstream.url,
      TASKS_HTTP_TIMEOUT_MS: '300000',
    })
    servers.push(server)
    const client = await httpClient(server.url, { modern: true, token: 'tok-ann' })
    try {
      let settled = false
      const call = client.callTool({ name: 'login', arguments: {} }).finally(() => {
        settled = true
      })
      // Awaited below; a failure before that must not leave it unhandled.
      call.catch(() => undefined)
      await until(() => (/mcp: login \(pid \d+\)/.test(server.stderr()) && upstream.held.length > 0 ? true : undefined))
      // A byte every 200 ms: never idle, and never done within its deadline (10 s for 100 bytes).
      const slow = slowRequest(
        server.url,
        { authorization: 'Bearer tok-ann', 'content-length': '100' },
        '{"jso',
        60_000,
        200,
      )
      // The call and the slow body hold both slots.
      const busy = await until(async () => {
        const r = await ping(server.url, { authorization: 'Bearer tok-ann' })
        return r.status === 503 ? r : undefined
      })
      expect(busy.headers.get('retry-after')).toBe('1')
      const answer = await slow.answer
      expect(answer.status, answer.text).toBe(408)
      await slow.closed
      expect((await ping(server.url, { authorization: 'Bearer tok-ann' })).status).toBe(200)
      // The call began before the body and has run past its deadline: it still answers, once its upstream does.
      expect(settled).toBe(false)
      for (const socket of upstream.held) socket.destroy()
      const result = sc(await call)
      expect(result.ok).toBe(false)
      expect(result.error.code).toMatch(/^E_/)
    } finally {
      await client.close().catch(() => undefined)
      await upstream.close()
    }
  }, 90_000)

  it('the RFC 9728 metadata of a public URL with a path is named at its §3.1 well-known path, which the server serves', async () => {
    const server = await startHttp(box(), [
      '--auth-tokens',
      tokens(),
      '--public-url',
      'https://mcp.example.com/tools/mcp',
    ])
    servers.push(server)
    const refused = await ping(server.url)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/tools/mcp"',
    )
    // What a proxy forwards as it is, and the listener's own.
    for (const path of [
      '/.well-known/oauth-protected-resource/tools/mcp',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const meta = await fetch(new URL(path, server.url))
      expect(meta.status, path).toBe(200)
      expect(await meta.json()).toMatchObject({ resource: 'https://mcp.example.com/tools/mcp' })
    }
  })

  it('a confirm token minted for one subject does not confirm for another, nor on the CLI; the audit names the subject', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const server = await startHttp(box(), [
      '--auth-tokens',
      tokens(),
      '--host',
      '0.0.0.0',
      '--allowed-host',
      '127.0.0.1',
    ])
    servers.push(server)
    const url = server.url.replace('0.0.0.0', '127.0.0.1')
    const ann = await httpClient(url, { modern: true, token: 'tok-ann' })
    const bob = await httpClient(url, { modern: true, token: 'tok-bob' })
    try {
      const dry = sc(await ann.callTool({ name: 'edit', arguments: { id: '1', title: 'by ann', dry_run: true } }))
      const token = dry.data.confirm_token as string
      const stolen = sc(await bob.callTool({ name: 'edit', arguments: { id: '1', title: 'by ann', confirm: token } }))
      expect(stolen.ok).toBe(false)
      expect(stolen.error.details.reason).toBe('other_account')
      const cli = env(await tasks(box(), ['edit', '1', '--title', 'by ann', '--confirm', token]))
      expect(cli.error.details.reason).toBe('other_account')
      const done = sc(await ann.callTool({ name: 'edit', arguments: { id: '1', title: 'by ann', confirm: token } }))
      expect(done.ok, JSON.stringify(done)).toBe(true)
      const audit = readFileSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      const applied = audit.filter((r) => r.command === 'edit' && r.mode === 'confirm')
      expect(applied.map((r) => r.subject)).toEqual(['ann (local)'])
    } finally {
      await ann.close()
      await bob.close()
    }
  })

  it('a checkpoint one subject started is resumed only by that subject: another one, or the CLI, gets E_NOT_FOUND', async () => {
    const { box, server } = authed()
    const ann = await httpClient(server.url, { token: 'tok-ann' })
    const bob = await httpClient(server.url, { token: 'tok-bob' })
    try {
      const started = sc(await ann.callTool({ name: 'login', arguments: {} }))
      expect(started.error.code).toBe('E_HUMAN_REQUIRED')
      const id = started.error.details.checkpoint_id as string
      const stolen = sc(await bob.callTool({ name: 'login_resume', arguments: { id } }))
      expect(stolen.error.code).toBe('E_NOT_FOUND')
      expect(env(await tasks(box, ['login', 'resume', '--id', id])).error.code).toBe('E_NOT_FOUND')
      // Its owner still can: the person has not acted yet, so the same checkpoint asks again.
      const own = sc(await ann.callTool({ name: 'login_resume', arguments: { id } }))
      expect(own.error.code).toBe('E_HUMAN_REQUIRED')
      expect(own.error.details.checkpoint_id).toBe(id)
    } finally {
      await ann.close()
      await bob.close()
    }
  })

  it("a tampered approval state, or another subject's, is refused as invalid (-32602); only its own subject's applies, once", async () => {
    const { box, server } = authed()
    const decline = (() => ({ action: 'decline' })) as never
    const ann = await httpClient(server.url, { modern: true, token: 'tok-ann', elicit: decline })
    const bob = await httpClient(server.url, { modern: true, token: 'tok-bob', elicit: decline })
    const title = 'gated over http'
    const made = async () =>
      (env(await tasksInProcess(box, ['list'])).data.items as Array<{ title: string }>).filter((t) => t.title === title)
    try {
      const first = (await ann.callTool(
        { name: 'create', arguments: { title } },
        { allowInputRequired: true },
        // biome-ignore lint/suspicious/noExplicitAny: the raw input-required result
      )) as any
      expect(first.resultType).toBe('input_required')
      const state = first.requestState as string
      // The retry carries the person's yes and the echoed state beside the arguments.
      const retry = (client: typeof ann, requestState: string) =>
        client
          .callTool(
            {
              name: 'create',
              arguments: { title },
              inputResponses: { approve: { action: 'accept', content: { approve: true } } },
              requestState,
            } as never,
            { allowInputRequired: true },
          )
          .then(
            (result) => ({ result }),
            (error: { code?: number; data?: unknown }) => ({ error: { code: error.code, data: error.data } }),
          )
      const invalid = { error: { code: -32602, data: { reason: 'invalid_request_state' } } }
      const flipped = state.slice(0, -2) + (state.at(-2) === 'A' ? 'B' : 'A') + state.at(-1)
      expect(await retry(ann, flipped)).toEqual(invalid)
      // What the conformance suite's tampered-state scenario sends.
      expect(await retry(ann, `${state}-TAMPERED`)).toEqual(invalid)
      // Genuine, but minted for ann: bob's echo of it is refused the same way, before any handler runs.
      expect(await retry(bob, state)).toEqual(invalid)
      expect(await made()).toHaveLength(0)
      const applied = await retry(ann, state)
      expect(sc((applied as { result: never }).result).ok, JSON.stringify(applied)).toBe(true)
      const replayed = await retry(ann, state)
      expect(sc((replayed as { result: never }).result).error.code).toBe('E_CONFLICT')
      expect(await made()).toHaveLength(1)
    } finally {
      await ann.close()
      await bob.close()
    }
  })

  it("an idempotency key is its subject's: ann's result is never bob's; bob's same key and input is bob's own write; the audit names each", async () => {
    const { box, server } = authed()
    const ann = await httpClient(server.url, { token: 'tok-ann' })
    const bob = await httpClient(server.url, { token: 'tok-bob' })
    const key = 'k-two-subjects'
    const title = 'same key, two subjects'
    const create = (client: typeof ann, more: Record<string, unknown>, t = title) =>
      client.callTool({ name: 'create', arguments: { title: t, idempotency_key: key, ...more } }).then(sc)
    const confirmed = async (client: typeof ann) => {
      const dry = await create(client, { dry_run: true })
      expect(dry.ok, JSON.stringify(dry)).toBe(true)
      return create(client, { confirm: dry.data.confirm_token })
    }
    try {
      const first = await confirmed(ann)
      expect(first.ok, JSON.stringify(first)).toBe(true)
      expect(first.meta.replayed).toBeUndefined()
      // ann's retry (no token needed) answers her recorded result.
      const again = await create(ann, {})
      expect(again).toMatchObject({ ok: true, data: first.data, meta: { replayed: true } })
      // bob's call with the same key and input is not answered with ann's result: for him the key is new, so the
      // gate asks him for a confirm like any first call.
      const foreign = await create(bob, {})
      expect(foreign.ok).toBe(false)
      expect(foreign.error.code).toBe('E_CONFIRMATION_REQUIRED')
      // Nor is it ann's key reused: other arguments conflict under ann's key, and are a plain dry-run under bob's.
      expect((await create(ann, { dry_run: true }, 'other')).error).toMatchObject({
        code: 'E_CONFLICT',
        details: { reason: 'idempotency_key_reused', idempotency_key: key },
      })
      expect((await create(bob, { dry_run: true }, 'other')).ok).toBe(true)
      // bob's own confirm is his own write: a new task, not a replay; from then on each subject replays their own.
      const own = await confirmed(bob)
      expect(own.ok, JSON.stringify(own)).toBe(true)
      expect(own.meta.replayed).toBeUndefined()
      expect(own.data.id).not.toBe(first.data.id)
      expect(await create(bob, {})).toMatchObject({ ok: true, data: own.data, meta: { replayed: true } })
      expect(await create(ann, {})).toMatchObject({ ok: true, data: first.data, meta: { replayed: true } })

      const items = env(await tasksInProcess(box, ['list'])).data.items as Array<{ id: string; title: string }>
      expect(items.filter((t) => t.title === title).map((t) => t.id)).toEqual([first.data.id, own.data.id])
      // One record per subject for the one key, in two scopes, each holding its own subject's task.
      const dir = join(box.env.XDG_DATA_HOME!, 'tasks', 'idempotency')
      const records = readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .map(
          (f) =>
            JSON.parse(readFileSync(join(dir, f), 'utf8')) as { scope: string; status: string; data: { id: string } },
        )
        .sort((a, b) => Number(a.data.id) - Number(b.data.id))
      expect(records.map((r) => [r.status, r.data.id])).toEqual([
        ['done', first.data.id],
        ['done', own.data.id],
      ])
      expect(records[0]!.scope).not.toBe(records[1]!.scope)
      const audit = readFileSync(join(box.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { args: string[]; subject?: string; mode: string; result_code: string })
        .filter((r) => r.args.includes(key))
      expect(audit.map((r) => [r.subject, r.mode, r.result_code])).toEqual([
        ['ann (local)', 'dry_run', 'OK'],
        ['ann (local)', 'confirm', 'OK'],
        ['ann (local)', 'replay', 'OK'],
        ['bob (local)', 'refused', 'E_CONFIRMATION_REQUIRED'],
        ['ann (local)', 'dry_run', 'E_CONFLICT'],
        ['bob (local)', 'dry_run', 'OK'],
        ['bob (local)', 'dry_run', 'OK'],
        ['bob (local)', 'confirm', 'OK'],
        ['bob (local)', 'replay', 'OK'],
        ['ann (local)', 'replay', 'OK'],
      ])
    } finally {
      await ann.close()
      await bob.close()
    }
  })

  it("an approval filed for ann's held change does not count for bob's identical one: bob stays held, nothing applied; ann's applies once", async () => {
    const { box, server } = authed()
    // The operator trusts one approver, alice (a real ssh-keygen key): a delete of over three tasks is held
    // (the example's bulk-delete rule) until she signs.
    const held = heldDeletes(box)
    const { dataDir, keys } = held
    const alice = keys.make('alice')
    held.trust([{ id: 'alice', key: alice.pub }])
    const ann = await httpClient(server.url, { token: 'tok-ann' })
    const bob = await httpClient(server.url, { token: 'tok-bob' })
    const ids = ['1', '2', '3', '4']
    const del = (client: typeof ann, more: Record<string, unknown>) =>
      client.callTool({ name: 'delete', arguments: { ids, ...more } }).then(sc)
    try {
      const dryAnn = await del(ann, { dry_run: true })
      const dryBob = await del(bob, { dry_run: true })
      const reqAnn = decodeRequest(dryAnn.data.approval.request as string)!
      const reqBob = decodeRequest(dryBob.data.approval.request as string)!
      // Each request names the subject who asked: what the approver reads and signs.
      expect(reqAnn.request.principal.subject).toEqual({ iss: 'local', sub: 'ann' })
      expect(reqBob.request.principal.subject).toEqual({ iss: 'local', sub: 'bob' })
      expect(reqBob.request.args_digest).toBe(reqAnn.request.args_digest)
      expect(reqBob.id).not.toBe(reqAnn.id)
      await fileApprovalStore(dataDir).add(reqAnn.id, sshSign(alice, reqAnn.bytes))
      const before = storeBytes(box)
      const held = (reason: string, notCounted?: unknown) => ({
        code: 'E_HUMAN_REQUIRED',
        details: {
          action: 'approve',
          reason,
          request_id: reqBob.id,
          request: dryBob.data.approval.request,
          approvals_required: 1,
          approvals_valid: 0,
          ...(notCounted ? { not_counted: notCounted } : {}),
        },
      })
      // ann's approval is filed under ann's request: bob's confirm of the identical change finds none of its own.
      const bobHeld = await del(bob, { confirm: dryBob.data.confirm_token })
      expect(bobHeld.error).toMatchObject(held('approval_required'))
      expect(bobHeld.error.details.not_counted).toBeUndefined()
      // The store is trusted with nothing: alice's signature over ann's request, filed under bob's, does not verify.
      const [signature] = await fileApprovalStore(dataDir).list(reqAnn.id)
      await fileApprovalStore(dataDir).add(reqBob.id, signature!)
      const copied = await del(bob, { confirm: dryBob.data.confirm_token })
      expect(copied.error).toMatchObject(held('approval_required', [{ index: 0, reason: 'bad_signature' }]))
      // Nor can bob present ann's approved token: it is ann's (other_account), refused before the gate.
      const stolen = await del(bob, { confirm: dryAnn.data.confirm_token })
      expect(stolen.error).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'other_account' } })
      expect(storeBytes(box)).toBe(before)
      // ann's own confirm counts alice's approval and applies, once.
      const applied = await del(ann, { confirm: dryAnn.data.confirm_token })
      expect(applied.ok, JSON.stringify(applied)).toBe(true)
      expect((env(await tasksInProcess(box, ['list'])).data.items as Array<{ id: string }>).map((t) => t.id)).toEqual([
        '5',
      ])
      const audit = readFileSync(join(dataDir, 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.command === 'delete')
        .map((r) => [r.subject, r.mode, r.result_code, r.approval_request, r.approved_by])
      expect(audit).toEqual([
        ['ann (local)', 'dry_run', 'OK', undefined, undefined],
        ['bob (local)', 'dry_run', 'OK', undefined, undefined],
        ['bob (local)', 'refused', 'E_HUMAN_REQUIRED', reqBob.id, undefined],
        ['bob (local)', 'refused', 'E_HUMAN_REQUIRED', reqBob.id, undefined],
        ['bob (local)', 'refused', 'E_CONFLICT', undefined, undefined],
        ['ann (local)', 'confirm', 'OK', reqAnn.id, ['alice']],
      ])
    } finally {
      await ann.close()
      await bob.close()
      held.dispose()
    }
  })

  it('an approver who is the subject that asked does not count over HTTP (self_approval); another subject may approve', async () => {
    const { box, server } = authed()
    // ann is a listed approver herself (by id) and bob by account: over HTTP the server's OS user and account are
    // every caller's, so only the subject can tell that ann is approving her own change.
    const held = heldDeletes(box)
    const { dataDir, keys } = held
    const annKey = keys.make('ann')
    const bobKey = keys.make('bob')
    held.trust([
      { id: 'ann', key: annKey.pub },
      { id: 'robert', key: bobKey.pub, account: 'bob' },
    ])
    const ann = await httpClient(server.url, { token: 'tok-ann' })
    try {
      const ids = ['1', '2', '3', '4']
      const dry = sc(await ann.callTool({ name: 'delete', arguments: { ids, dry_run: true } }))
      const req = decodeRequest(dry.data.approval.request as string)!
      const store = fileApprovalStore(dataDir)
      await store.add(req.id, sshSign(annKey, req.bytes))
      const before = storeBytes(box)
      const own = sc(await ann.callTool({ name: 'delete', arguments: { ids, confirm: dry.data.confirm_token } }))
      expect(own.error).toMatchObject({
        code: 'E_HUMAN_REQUIRED',
        details: {
          reason: 'approval_required',
          approvals_valid: 0,
          not_counted: [{ index: 0, reason: 'self_approval' }],
        },
      })
      expect(storeBytes(box)).toBe(before)
      // bob (the approver `robert`, acting as account bob) is not the subject who asked: his approval counts.
      await store.add(req.id, sshSign(bobKey, req.bytes))
      const applied = sc(await ann.callTool({ name: 'delete', arguments: { ids, confirm: dry.data.confirm_token } }))
      expect(applied.ok, JSON.stringify(applied)).toBe(true)
      expect((env(await tasksInProcess(box, ['list'])).data.items as Array<{ id: string }>).map((t) => t.id)).toEqual([
        '5',
      ])
    } finally {
      await ann.close()
      held.dispose()
    }
  })

  it("a token minted on the CLI is not the authenticated subject's: over HTTP other_account, nothing consumed, the CLI confirms it once", async () => {
    const { box, server } = authed()
    seed(box, [{ id: '1', title: 'one' }])
    const ann = await httpClient(server.url, { modern: true, token: 'tok-ann' })
    try {
      const token = env(await tasksInProcess(box, ['edit', '1', '--title', 'by cli', '--dry-run'])).data
        .confirm_token as string
      const foreign = sc(await ann.callTool({ name: 'edit', arguments: { id: '1', title: 'by cli', confirm: token } }))
      expect(foreign.error.code).toBe('E_CONFLICT')
      expect(foreign.error.details.reason).toBe('other_account')
      expect(env(await tasksInProcess(box, ['get', '1'])).data.title).toBe('one')
      expect(env(await tasks(box, ['edit', '1', '--title', 'by cli', '--confirm', token])).ok).toBe(true)
    } finally {
      await ann.close()
    }
  })
})

describe('tool mcp --http --auth-issuer: JWTs of an authorization server', () => {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  let issuer = ''
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const jwt = (claims: Record<string, unknown>, signer = key.privateKey) => {
    const input = `${b64({ alg: 'ES256', kid: 'k1' })}.${b64({ iss: issuer, sub: 'ann', exp: Math.floor(Date.now() / 1000) + 600, ...claims })}`
    return `${input}.${sign('sha256', Buffer.from(input), { key: signer, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`
  }
  // One authorization server and one endpoint trusting it, for the tests below.
  let as: Server | undefined
  const issued = useSharedServer(
    'server',
    async (box) => {
      const server: Server = createServer((req, res) => {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        res.setHeader('content-type', 'application/json')
        if (req.url === '/.well-known/oauth-authorization-server')
          return void res.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks` }))
        if (req.url === '/jwks')
          return void res.end(
            JSON.stringify({ keys: [{ ...(key.publicKey.export({ format: 'jwk' }) as object), kid: 'k1' }] }),
          )
        res.statusCode = 404
        res.end('{}')
      })
      as = server
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      return { server: await startHttp(box, ['--auth-issuer', issuer]) }
    },
    async ({ server }) => {
      await server.stop()
      await new Promise((r) => as?.close(r))
    },
  )

  it("--auth-issuer: the issuer's JWT is served; wrong issuer, expired or another key's signature is 401", async () => {
    const { server } = issued()
    const post = (token: string) =>
      fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
    expect((await post(jwt({ aud: server.url }))).status).toBe(200)
    expect((await post(jwt({ aud: server.url, iss: 'http://127.0.0.1:1' }))).status).toBe(401)
    expect((await post(jwt({ aud: server.url, exp: Math.floor(Date.now() / 1000) - 3600 }))).status).toBe(401)
    expect((await post(jwt({ aud: server.url }, forger.privateKey))).status).toBe(401)
    expect((await post(jwt({ aud: 'https://elsewhere.example/mcp' }))).status).toBe(401)
    const meta = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.url))).json()
    expect(meta).toMatchObject({ resource: server.url, authorization_servers: [issuer] })
    const client = await httpClient(server.url, { modern: true, token: jwt({ aud: server.url }) })
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    await client.close()
  })

  it('the official client without a token, or with a JWT of the wrong issuer, expired or forged, gets its 401 in either era, and nothing runs', async () => {
    const { box, server } = issued()
    seed(box, [{ id: '1', title: 'one' }])
    const before = storeBytes(box)
    const from = server.stderr().length
    const bad: Array<[string, string]> = [
      ['wrong issuer', jwt({ aud: server.url, iss: 'http://127.0.0.1:1' })],
      ['expired', jwt({ aud: server.url, exp: Math.floor(Date.now() / 1000) - 3600 })],
      ['forged', jwt({ aud: server.url }, forger.privateKey)],
    ]
    const attempt = async (modern: boolean, token?: string) => {
      const client = await httpClient(server.url, { modern, ...(token ? { token } : {}) })
      try {
        return await client.callTool({ name: 'edit', arguments: { id: '1', title: 'never', dry_run: true } })
      } finally {
        await client.close()
      }
    }
    for (const modern of [false, true]) {
      // A client with no credential to offer gets the HTTP error itself; one with a token, the SDK's auth error.
      await expect(attempt(modern), `no token, modern: ${modern}`).rejects.toMatchObject({
        name: 'SdkHttpError',
        data: { status: 401 },
      })
      for (const [what, token] of bad)
        await expect(attempt(modern, token), `${what}, modern: ${modern}`).rejects.toBeInstanceOf(UnauthorizedError)
    }
    // The valid token's call is logged; none of the refused ones was.
    const client = await httpClient(server.url, { modern: true, token: jwt({ aud: server.url }) })
    try {
      expect(sc(await client.callTool({ name: 'get', arguments: { id: '1' } })).ok).toBe(true)
    } finally {
      await client.close()
    }
    await until(() => (/mcp: get 1/.test(server.stderr().slice(from)) ? true : undefined))
    expect(server.stderr().slice(from)).not.toMatch(/mcp: edit/)
    expect(storeBytes(box)).toBe(before)
  })

  it("another subject's confirm token is refused (other_account), nothing applied; its own subject confirms it once", async () => {
    const { box, server } = issued()
    seed(box, [{ id: '1', title: 'one' }])
    const ann = await httpClient(server.url, { modern: true, token: jwt({ aud: server.url }) })
    const bob = await httpClient(server.url, { token: jwt({ aud: server.url, sub: 'bob' }) })
    try {
      const dry = sc(await ann.callTool({ name: 'edit', arguments: { id: '1', title: 'by ann', dry_run: true } }))
      const token = dry.data.confirm_token as string
      const stolen = sc(await bob.callTool({ name: 'edit', arguments: { id: '1', title: 'by ann', confirm: token } }))
      expect(stolen.error.code).toBe('E_CONFLICT')
      expect(stolen.error.details.reason).toBe('other_account')
      expect(env(await tasksInProcess(box, ['get', '1'])).data.title).toBe('one')
      expect(sc(await ann.callTool({ name: 'edit', arguments: { id: '1', title: 'by ann', confirm: token } })).ok).toBe(
        true,
      )
      const again = sc(await ann.callTool({ name: 'edit', arguments: { id: '1', title: 'by ann', confirm: token } }))
      expect(again.error.details.reason).toBe('already_used')
    } finally {
      await ann.close()
      await bob.close()
    }
  })
})
