import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { sandbox } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { useColdTasks } from '../../support/cold-tasks.js'
import { apiEnv, deviceServer } from '../../support/device-server.js'
import { alive, env, seed, TASKS_BIN, until, useSandbox } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'
import { openSession, type Session, sc, useSharedSession } from '../../support/mcp-session.js'

// These flows are not about the warm pool: their servers start none (cold-tasks.ts).
useColdTasks()

describe.each([
  ['2025-11-25 handshake', false],
  ['2026-07-28', true],
])('tool mcp (%s): checkpoints, jobs, cancellation, discovery', (_era, modern) => {
  const box = useSandbox()
  // A client without elicitation, on a sandbox of its own: one server for what needs no other (a checkpoint it
  // cannot ask about, the async job, the full listing); the job is the only one to write its store.
  const plain = useSharedSession({ modern })

  it('E_HUMAN_REQUIRED: without elicitation the error envelope with resume; with it, the person acts and the call resumes', async () => {
    const first = sc(await plain().s.client.callTool({ name: 'login', arguments: {} }))
    expect(first.error.code).toBe('E_HUMAN_REQUIRED')
    expect(first.error.details.resume).toMatch(/^tasks login resume --id cp_/)
    const messages: string[] = []
    const person = await openSession(box(), {
      modern,
      elicit: async (p) => {
        messages.push(p.message)
        // The person at the client enters the code on the approval page (the example's stand-in for a browser).
        const code = /(?:code|approve) ([0-9A-F]{8})/.exec(p.message)![1]!
        expect(env(await tasksInProcess(box(), ['login', 'approve', code])).ok).toBe(true)
        return { action: 'accept', content: { done: true } }
      },
    })
    try {
      const r = sc(await person.client.callTool({ name: 'login', arguments: {} }))
      expect(messages).toHaveLength(1)
      expect(r.ok, JSON.stringify(r)).toBe(true)
      expect(r.data).toMatchObject({ account: 'local-user', logged_in: true })
      expect(env(await tasksInProcess(box(), ['whoami'])).data.account).toBe('local-user')
    } finally {
      await person.close()
    }
  })

  it('a device login over an https URL uses URL-mode elicitation, then resumes once the person approved', async () => {
    const api = await deviceServer()
    // biome-ignore lint/suspicious/noExplicitAny: elicitation params
    const asked: any[] = []
    const s = await openSession(box(), {
      modern,
      env: apiEnv(api),
      elicit: (p) => {
        asked.push(p)
        api.approve()
        return { action: 'accept' }
      },
    })
    try {
      const r = sc(await s.client.callTool({ name: 'login', arguments: {} }))
      expect(asked).toHaveLength(1)
      expect(asked[0]).toMatchObject({ mode: 'url', url: 'https://tasks.example/device' })
      expect(asked[0].message).toContain('CODE0001')
      expect(r.ok, JSON.stringify(r)).toBe(true)
      expect(r.data).toMatchObject({ account: 'ann', logged_in: true })
    } finally {
      await s.close()
      await api.close()
    }
  })

  it('a declined checkpoint answers with the error envelope and its resume', async () => {
    const s = await openSession(box(), { modern, elicit: () => ({ action: 'decline' }) })
    try {
      const r = sc(await s.client.callTool({ name: 'login', arguments: {} }))
      expect(r.error.code).toBe('E_HUMAN_REQUIRED')
      expect(r.error.details.resume).toContain('login resume')
    } finally {
      await s.close()
    }
  })

  it('an async job: submitting returns the handle; job_status and job_result follow it', async () => {
    const { box: own, s } = plain()
    const file = join(own.root, 'in.jsonl')
    writeFileSync(file, '{"title":"a"}\n{"title":"b","status":"done"}\n')
    const dry = sc(await s.client.callTool({ name: 'import', arguments: { file, dry_run: true } }))
    expect(dry.ok).toBe(true)
    const job = sc(await s.client.callTool({ name: 'import', arguments: { file, confirm: dry.data.confirm_token } }))
    expect(job.ok, JSON.stringify(job)).toBe(true)
    expect(job.data.job_id).toMatch(/^job_/)
    const id = job.data.job_id as string
    const done = await until(async () => {
      const status = sc(await s.client.callTool({ name: 'job_status', arguments: { id } }))
      return ['succeeded', 'failed'].includes(status.data.status) ? status : undefined
    })
    expect(done.data.status).toBe('succeeded')
    const result = sc(await s.client.callTool({ name: 'job_result', arguments: { id } }))
    expect(result.ok).toBe(true)
    expect(env(await tasksInProcess(own, ['list'])).data.items).toHaveLength(2)
  })

  /**
   * One server whose `login` waits on an upstream that accepts the connection and never answers: the cancellation
   * test leaves it serving, and the test of a client that goes away ends it (or each makes it, run alone).
   */
  type Held = { s: Session; held: Array<{ destroy(): void }>; close(): Promise<void> }
  let waiting: Promise<Held> | undefined
  const waitingServer = (): Promise<Held> => {
    waiting ??= (async () => {
      const held: Array<{ destroy(): void }> = []
      const upstream: Server = createServer((req) => held.push(req.socket))
      await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
      const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`
      // A sandbox of its own: it outlives the test that starts it.
      const own = sandbox()
      const s = await openSession(own, { modern, env: { TASKS_API_URL: url, TASKS_HTTP_TIMEOUT_MS: '60000' } })
      return {
        s,
        held,
        close: async () => {
          await s.close().catch(() => undefined)
          for (const socket of held) socket.destroy()
          await new Promise((r) => upstream.close(r))
          own.cleanup()
        },
      }
    })()
    return waiting
  }
  afterAll(async () => {
    await (await waiting)?.close()
    waiting = undefined
  })
  /** The PID of the `login` this test started, once its request to the upstream is held. */
  const heldLogin = ({ s, held }: Held, from: { log: number; held: number }) =>
    until(async () => {
      const m = /mcp: login \(pid (\d+)\)/.exec(s.stderr().slice(from.log))
      return m && held.length > from.held ? Number(m[1]) : undefined
    })

  it('cancellation from the client stops the command: its process gets SIGINT and is gone', async () => {
    const server = await waitingServer()
    const { s } = server
    const from = { log: s.stderr().length, held: server.held.length }
    const controller = new AbortController()
    const pending = s.client.callTool({ name: 'login', arguments: {} }, { signal: controller.signal })
    const pid = await heldLogin(server, from)
    expect(alive(pid)).toBe(true)
    controller.abort()
    await expect(pending).rejects.toThrow()
    await until(async () => (alive(pid) ? undefined : true), 5000)
    // The server is still up.
    expect(sc(await s.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
  })

  it('a client that goes away mid-call leaves no call running: the server interrupts it and exits', async () => {
    const server = await waitingServer()
    waiting = undefined
    const { s } = server
    try {
      const from = { log: s.stderr().length, held: server.held.length }
      const pending = s.client.callTool({ name: 'login', arguments: {} }).catch(() => undefined)
      const pid = await heldLogin(server, from)
      await s.close()
      await pending
      await until(async () => (alive(pid) ? undefined : true), 5000)
    } finally {
      await server.close()
    }
  })

  it('progressive discovery lists search_tools, describe_tool and call_tool; they reach the same tools', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const listed = (await plain().s.client.listTools()).tools.find((t) => t.name === 'get')!
    const s = await openSession(box(), { modern, args: ['--discovery'] })
    try {
      const { tools } = await s.client.listTools()
      expect(tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'call_tool'])
      const found = sc(await s.client.callTool({ name: 'search_tools', arguments: { query: 'task show' } }))
      expect(found.tools.map((t: { name: string }) => t.name)).toContain('get')
      const described = sc(await s.client.callTool({ name: 'describe_tool', arguments: { name: 'get' } }))
      expect(described.inputSchema).toEqual(listed.inputSchema)
      expect(described.annotations).toEqual(listed.annotations)
      const got = sc(await s.client.callTool({ name: 'call_tool', arguments: { name: 'get', arguments: { id: '1' } } }))
      expect(got.data.title).toBe('one')
      const gated = sc(
        await s.client.callTool({ name: 'call_tool', arguments: { name: 'create', arguments: { title: 'x' } } }),
      )
      expect(gated.error.code).toBe('E_CONFIRMATION_REQUIRED')
      const unknown = sc(await s.client.callTool({ name: 'call_tool', arguments: { name: 'nope' } }))
      expect(unknown.error.code).toBe('E_USAGE')
    } finally {
      await s.close()
    }
  })
})

// Off PATH, a call prints its next steps as `node /abs/bin/run.js …` (or the node binary's path): the server must
// still recognise its own resume command, for either way a client may start it (docs/mcp.md suggests both).
describe('tool mcp off PATH: a checkpoint resumes whichever way the server was started', () => {
  const box = useSandbox()
  const nodeDir = (): string => {
    const dir = join(box().root, 'node-only')
    mkdirSync(dir, { recursive: true })
    symlinkSync(process.execPath, join(dir, 'node'))
    return dir
  }

  it.each([
    ['by its full path (shebang, node from PATH)', 'path'],
    ['as node …/run.js mcp (node by its path, not on PATH)', 'node'],
  ])('started %s', async (_name, form) => {
    // PATH holds no `tasks` (and, for the second form, no node either): the printed resume is not `tasks …`.
    const PATH = form === 'path' ? `${nodeDir()}:/usr/bin:/bin` : '/usr/bin:/bin'
    const start = form === 'path' ? { command: TASKS_BIN } : {}
    const codes: string[] = []
    let asked = 0
    const s = await openSession(box(), {
      ...start,
      env: { PATH },
      elicit: async (p) => {
        // The first login is declined, so its answer is the envelope as the call printed it, resume and all.
        if (asked++ === 0) return { action: 'decline' }
        const code = /(?:code|approve) ([0-9A-F]{8})/.exec(p.message)![1]!
        codes.push(code)
        expect(env(await tasksInProcess(box(), ['login', 'approve', code])).ok).toBe(true)
        return { action: 'accept', content: { done: true } }
      },
    })
    try {
      // The premise: what the call prints to resume does not start with the bin's name.
      const declined = sc(await s.client.callTool({ name: 'login', arguments: {} }))
      expect(declined.error.code).toBe('E_HUMAN_REQUIRED')
      expect(declined.error.details.resume).toMatch(/^\S*node \/\S+\/run\.js login resume --id cp_/)
      const from = s.stderr().length
      const r = sc(await s.client.callTool({ name: 'login', arguments: {} }))
      const log = s.stderr().slice(from)
      // One device code asked for and approved; the server ran the resume, not `login` a second time.
      expect(codes).toHaveLength(1)
      expect(r.ok, JSON.stringify(r)).toBe(true)
      expect(r.data).toMatchObject({ account: 'local-user', logged_in: true })
      expect(log).toMatch(/mcp: login resume --id cp_/)
      expect(log.match(/mcp: login \(pid/g)).toHaveLength(1)
    } finally {
      await s.close()
    }
  })
})
