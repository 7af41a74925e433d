import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool, type Sandbox } from 'agentcli/testing'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { tasksServer, useColdTasks } from '../../support/cold-tasks.js'
import { editJson, useToolCopy } from '../../support/copy.js'
import { alive, ROOT, seed, until, useSandbox } from '../../support/helpers.js'
import { openSession, sc, useSharedSession } from '../../support/mcp-session.js'

const STUBBORN = join(ROOT, 'test/fixtures/stubborn.mjs')

// Not about the warm pool: the servers start none (cold-tasks.ts; the copies below set it themselves).
useColdTasks()

/**
 * Every PID this test caused to start (the server, a call, its child; the fixture writes the last two in `pidDir`,
 * outside the sandbox, which is gone before this hook runs): whatever is left is killed afterwards, by PID.
 */
const started = new Set<number>()
const pidDir = mkdtempSync(join(tmpdir(), 'mcp-robust-'))
let files = 0
afterEach(() => {
  for (const file of readdirSync(pidDir))
    for (const m of readFileSync(join(pidDir, file), 'utf8').matchAll(/(\d+)/g)) started.add(Number(m[1]))
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL')
  started.clear()
})
afterAll(() => rmSync(pidDir, { recursive: true, force: true }))

/** A call of `command` that ignores SIGINT and SIGTERM and has a child that does too (test/fixtures/stubborn.mjs). */
function stubborn(command: string) {
  const file = join(pidDir, `pids-${++files}`)
  const env = { NODE_OPTIONS: `--import=${STUBBORN}`, STUBBORN_COMMAND: command, STUBBORN_PIDS: file }
  /** The call's PID and its child's, once both ignore the signals. */
  const ready = () =>
    until(() => {
      let text = ''
      try {
        text = readFileSync(file, 'utf8')
      } catch {}
      const child = /^child (\d+)/m.exec(text)
      const grandchild = /grandchild (\d+)/.exec(text)
      if (!child || !grandchild) return undefined
      const pids = [Number(child[1]), Number(grandchild[1])]
      for (const pid of pids) started.add(pid)
      return pids
    })
  /** The PIDs written so far. */
  const known = () => {
    let text = ''
    try {
      text = readFileSync(file, 'utf8')
    } catch {}
    const pids = [...text.matchAll(/(\d+)/g)].map((m) => Number(m[1]))
    for (const pid of pids) started.add(pid)
    return pids
  }
  return { env, ready, known }
}

const gone = (pids: number[]) => until(() => (pids.some(alive) ? undefined : true))

describe('tool mcp: a call the client gives up on, or a server that stops, leaves no process behind', () => {
  const box = useSandbox()
  const copy = useToolCopy()
  /**
   * The example tool with `agentcli.mcp.kill_grace_ms` set to 300: the stubborn call ignores SIGINT and SIGTERM
   * for good, so SIGKILL comes whatever the grace; the default 5 s would only be waited out. No warm processes, and
   * no read in the server's process (`in_process_reads` false): the `get` starts as a cold one does.
   */
  const quickToKill = () =>
    join(
      copy('examples/tasks', (dir) =>
        editJson(join(dir, 'package.json'), (pkg) => {
          const agentcli = pkg.agentcli as Record<string, unknown>
          agentcli.mcp = { ...(agentcli.mcp as object), kill_grace_ms: 300, warm_processes: 0, in_process_reads: false }
        }),
      ),
      'bin/run.js',
    )

  it('a client timeout stops the call and what it started, and the server serves the next one', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const call = stubborn('get')
    const s = await openSession(box(), { env: call.env, bin: quickToKill() })
    started.add(s.pid()!)
    try {
      const timedOut = s.client.callTool({ name: 'get', arguments: { id: '1' } }, { timeout: 3000 })
      await expect(timedOut).rejects.toThrow(/timed out/i)
      // The call's PID from the server's log; its child's from the fixture, when it got that far before the stop
      // (the SIGKILL escalation itself is pinned by the cancel test below, which waits for both first).
      const pid = await until(() => {
        const m = /mcp: get 1 \(pid (\d+)\)/.exec(s.stderr())
        return m ? Number(m[1]) : undefined
      })
      started.add(pid)
      await gone([pid])
      await gone(call.known())
      // The server is still up and serves the next call.
      expect(sc(await s.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
    } finally {
      await s.close()
    }
  })

  it('notifications/cancelled stops the call the same way', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const call = stubborn('get')
    const s = await openSession(box(), { modern: true, env: call.env, bin: quickToKill() })
    started.add(s.pid()!)
    try {
      const controller = new AbortController()
      const pending = s.client.callTool({ name: 'get', arguments: { id: '1' } }, { signal: controller.signal })
      const pids = await call.ready()
      expect(pids.every(alive)).toBe(true)
      controller.abort()
      await expect(pending).rejects.toThrow()
      await gone(pids)
      // The server logs the escalation as it sends SIGKILL; the line may reach this pipe after the process is gone.
      const escalated = new RegExp(`mcp: pid ${pids[0]} still running \\d+ ms after SIGINT: SIGKILL`)
      await until(() => escalated.test(s.stderr()) || undefined).catch(() => undefined)
      expect(s.stderr()).toMatch(escalated)
      expect(sc(await s.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
    } finally {
      await s.close()
    }
  })

  it('SIGTERM to the server ends every running call before it exits', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const call = stubborn('get')
    const s = await openSession(box(), { env: call.env, bin: quickToKill() })
    const server = s.pid()!
    started.add(server)
    const pending = s.client.callTool({ name: 'get', arguments: { id: '1' } }).catch(() => undefined)
    const pids = await call.ready()
    process.kill(server, 'SIGTERM')
    await gone([server, ...pids])
    await pending
    await s.close()
  })

  it('stdin closed: the server stops every running call, then exits on its own', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const call = stubborn('get')
    const raw = rawServer(box(), call.env, quickToKill())
    await raw.initialize()
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get', arguments: { id: '1' } } })
    const pids = await call.ready()
    raw.child.stdin.end()
    const exit = await new Promise<number | null>((r) => raw.child.once('exit', (code) => r(code)))
    expect(exit).toBe(0)
    await gone(pids)
    expect(raw.stderr()).toMatch(/stopping 1 running call/)
  })
})

describe('tool mcp: a message it cannot take is answered with the JSON-RPC error, and the session goes on', () => {
  const box = useSandbox()

  it('oversized (over the 4 MiB default, and over the SDK 10 MiB), malformed and invalid lines; then tools/list', async () => {
    const raw = rawServer(box())
    await raw.initialize()
    const big = (bytes: number) =>
      `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get","arguments":{"id":"${'x'.repeat(bytes)}"}}}`
    raw.sendLine(big(4 * 1024 * 1024))
    const oversized = await raw.next((m) => m.error?.code === -32600)
    expect(oversized).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { max_bytes: 4 * 1024 * 1024 } } })
    raw.sendLine(big(11 * 1024 * 1024))
    raw.sendLine('{"jsonrpc":"2.0","id":3,"method":"tools/list"')
    const parse = await raw.next((m) => m.error?.code === -32700)
    expect(parse).toMatchObject({ jsonrpc: '2.0', id: null })
    raw.sendLine('{"jsonrpc":"2.0","id":4,"method":5}')
    expect(await raw.next((m) => m.id === 4)).toMatchObject({ error: { code: -32600 } })
    raw.sendLine('[]')
    raw.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' })
    const list = await raw.next((m) => m.id === 5)
    expect(list.result.tools.map((t: { name: string }) => t.name)).toContain('get')
    // One answer per refused line: two oversized, one parse error, two invalid requests.
    expect(raw.messages.filter((m) => m.error).map((m) => m.error.code)).toEqual([
      -32600, -32600, -32700, -32600, -32600,
    ])
    expect(raw.child.exitCode).toBeNull()
    raw.child.stdin.end()
    await new Promise((r) => raw.child.once('exit', r))
  })
})

describe("tool mcp: the message limit is the tool author's (package.json)", () => {
  const box = useSandbox()
  const copy = useToolCopy()
  const withLimit = (limit: unknown) =>
    copy('examples/tasks', (dir) =>
      editJson(join(dir, 'package.json'), (pkg) => {
        pkg.agentcli = { ...(pkg.agentcli as object), mcp: { max_message_bytes: limit, warm_processes: 0 } }
      }),
    )

  it('a line over the limit set is refused, one under it is served', async () => {
    const dir = withLimit(64 * 1024)
    const raw = rawServer(box(), {}, join(dir, 'bin/run.js'))
    await raw.initialize()
    const call = (id: number, bytes: number) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"get","arguments":{"id":"${'x'.repeat(bytes)}"}}}`
    raw.sendLine(call(2, 64 * 1024))
    expect(await raw.next((m) => m.error?.code === -32600)).toMatchObject({
      id: null,
      error: { data: { max_bytes: 65536 } },
    })
    raw.sendLine(call(3, 60 * 1024))
    expect((await raw.next((m) => m.id === 3)).result.structuredContent.error.code).toBe('E_NOT_FOUND')
    raw.child.stdin.end()
    await new Promise((r) => raw.child.once('exit', r))
  })

  it('a limit out of bounds is E_CONFIG naming the setting, before anything is served', async () => {
    const dir = withLimit(100)
    const run = await runTool(join(dir, 'bin/run.js'), ['mcp'], { env: box().env })
    expect(run.code).not.toBe(0)
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: 'E_CONFIG',
      details: { setting: 'agentcli.mcp.max_message_bytes', got: 100 },
    })
  })
})

describe('tool mcp: arguments the server refuses before any process starts', () => {
  // Both on one server, over a sandbox holding task 1; each reads only its part of the server's log.
  const shared = useSharedSession({ setup: (b) => seed(b, [{ id: '1', title: 'one' }]) })

  it('an unknown argument (help) is E_USAGE naming the input schema properties', async () => {
    const { s } = shared()
    const from = s.stderr().length
    const get = (await s.client.listTools()).tools.find((t) => t.name === 'get')!
    const r = await s.client.callTool({ name: 'get', arguments: { id: '1', help: true } })
    expect(r.isError).toBe(true)
    expect(sc(r).error).toMatchObject({ code: 'E_USAGE', details: { got: 'help' } })
    expect(sc(r).error.details.allowed).toEqual(Object.keys(get.inputSchema.properties!))
    expect(s.stderr().slice(from)).not.toContain('mcp: get')
  })

  it('an argument larger than a command line takes is E_VALIDATION naming the bound, not spawn E2BIG', async () => {
    const { s } = shared()
    for (const size of [200 * 1024, 3 * 1024 * 1024]) {
      const r = await s.client.callTool({ name: 'create', arguments: { title: 'x'.repeat(size), dry_run: true } })
      expect(r.isError).toBe(true)
      expect(sc(r).error).toMatchObject({
        code: 'E_VALIDATION',
        details: { param: 'title', max_bytes: 64 * 1024 },
      })
      expect(sc(r).error.details.got_bytes).toBeGreaterThan(size)
    }
    // Under the bound, the call runs.
    const fits = await s.client.callTool({ name: 'create', arguments: { title: 'x'.repeat(1000), dry_run: true } })
    expect(sc(fits).ok).toBe(true)
  })
})

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON-RPC answers
type Message = { id?: unknown; result?: any; error?: any; [k: string]: unknown }

/** `tasks mcp` spoken to line by line: what no SDK client sends (a broken line, an oversized one). */
function rawServer(box: Sandbox, extra: Record<string, string> = {}, bin?: string) {
  const example = tasksServer()
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [bin ?? example.bin, 'mcp'], {
    env: { PATH: process.env.PATH ?? '', ...example.env, ...box.env, ...extra },
  })
  started.add(child.pid!)
  const messages: Message[] = []
  let pending = ''
  let log = ''
  child.stdout.on('data', (c: Buffer) => {
    pending += c.toString('utf8')
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      if (line.trim()) messages.push(JSON.parse(line))
    }
  })
  child.stderr.on('data', (c: Buffer) => {
    log += c.toString('utf8')
  })
  const sendLine = (line: string) => child.stdin.write(`${line}\n`)
  const send = (message: Record<string, unknown>) => sendLine(JSON.stringify(message))
  const next = (match: (m: Message) => boolean) => until(() => messages.find(match))
  return {
    child,
    messages,
    stderr: () => log,
    send,
    sendLine,
    next,
    async initialize() {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
      })
      await next((m) => m.id === 1)
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    },
  }
}
