import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { runTool, type Sandbox } from 'agentcli/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { editJson, useToolCopy } from '../../support/copy.js'
import { alive, env, ROOT, seed, useSandbox, useSharedServer } from '../../support/helpers.js'
import { FIXTURE_ROOT } from '../../support/in-process.js'
import { openSession, type Session, sc, withoutDuration } from '../../support/mcp-session.js'
import { poolLog } from '../../support/warm-log.js'

/** Every server this file started: whatever is left is killed by PID. */
const started = new Set<number>()
afterEach(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL')
  started.clear()
})

/** The calls the server ran in a process of their own (`mcp: <argv> (pid N)[ warm]`), argv only; from `from` on. */
const processCalls = (s: Session, from = 0) =>
  [
    ...s
      .stderr()
      .slice(from)
      .matchAll(/^mcp: (.+) \(pid \d+\)( warm)?$/gm),
  ]
    .map((m) => m[1]!)
    .filter((argv) => argv !== 'warm process ready')

describe('tool mcp: read calls in the server process (agentcli.mcp.in_process_reads)', () => {
  const box = useSandbox()
  const copy = useToolCopy()
  const inProcessReads = (value: unknown) => (d: string) =>
    editJson(join(d, 'package.json'), (pkg) => {
      const agentcli = pkg.agentcli as Record<string, unknown>
      pkg.agentcli = { ...agentcli, mcp: { ...(agentcli.mcp as object), in_process_reads: value } }
    })
  /**
   * A copy of a tool with in-process reads on (it keeps its bundle: the server runs from it, as installed), and its
   * other MCP settings (the fixture's: no warm processes, which its bin cannot start).
   */
  const withInProcess = (source: string, value: unknown = true) => copy(source, inProcessReads(value))
  /**
   * The example's copy with nothing set (in-process reads are on by default), served by one server in a sandbox of
   * its own, for the tests that need no other: each seeds what it reads and reads the server's log from its own start.
   */
  const plain = useSharedServer(
    'server',
    async (b) => {
      const dir = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-'))
      cpSync(join(ROOT, 'examples/tasks'), dir, { recursive: true, filter: (p) => !p.includes('node_modules') })
      const bin = join(dir, 'bin/run.js')
      return { dir, bin, s: await openSession(b, { bin }) }
    },
    async ({ dir, s }) => {
      await s.close()
      rmSync(dir, { recursive: true, force: true })
    },
  )
  /** The shared server's copy on the CLI, in its sandbox. */
  const plainCli = (b: Sandbox, copyBin: string, argv: readonly string[]) =>
    runTool(copyBin, argv, { env: b.env, validateOutput: false })
  let bin = ''
  const open = async (source = 'examples/tasks', extra: Record<string, string> = {}, value = true) => {
    bin = join(withInProcess(source, value), 'bin/run.js')
    const s = await openSession(box(), { bin, env: extra })
    started.add(s.pid()!)
    return s
  }
  /** The same copy on the CLI (its next-step hints name its own bin). */
  const tasks = (argv: readonly string[], env: Record<string, string> = {}) =>
    runTool(bin, argv, { env: { ...box().env, ...env }, validateOutput: false })

  it('a read runs in the server process and answers the envelope the CLI prints', async () => {
    const { box: b, bin: copyBin, s } = plain()
    seed(b, [{ id: '1', title: 'one' }])
    const from = s.stderr().length
    for (const [tool, args, argv] of [
      ['get', { id: '1' }, ['get', '1']],
      ['get', { id: '9' }, ['get', '9']],
      ['list', { status: 'open', fields: 'id' }, ['list', '--status', 'open', '--fields', 'id']],
    ] as const) {
      const viaMcp = await s.client.callTool({ name: tool, arguments: args })
      const cli = env(await plainCli(b, copyBin, [...argv]))
      expect(withoutDuration(sc(viaMcp))).toEqual(withoutDuration(cli))
      expect(viaMcp.isError).toBe(cli.ok !== true)
    }
    expect(poolLog(s.stderr().slice(from)).inProcess).toEqual(['get 1', 'get 9', 'list --status open --fields id'])
    expect(processCalls(s, from)).toEqual([])
  })

  it('reads at once: each answered right, one in the server and the others by processes, never waiting', async () => {
    const { box: b, bin: copyBin, s } = plain()
    seed(b, [
      { id: '1', title: 'one' },
      { id: '2', title: 'two' },
    ])
    const from = s.stderr().length
    const calls = [{ id: '1' }, { id: '2' }, { id: '1' }, { id: '3' }] as const
    const results = await Promise.all(calls.map((args) => s.client.callTool({ name: 'get', arguments: args })))
    for (const [i, args] of calls.entries()) {
      const cli = env(await plainCli(b, copyBin, ['get', args.id]))
      expect(withoutDuration(sc(results[i])), args.id).toEqual(withoutDuration(cli))
    }
    // Every call was run exactly once, by the server or by a process.
    const log = poolLog(s.stderr().slice(from))
    expect(log.inProcess.length + processCalls(s, from).length).toBe(4)
    expect(log.inProcess.length).toBeGreaterThanOrEqual(1)
    // The pool's rule over the whole log: a warm process's readiness may have come before this test.
    expect(poolLog(s.stderr()).violations).toEqual([])
  })

  it("the server's environment reaches the read, but never its <BIN>_FORMAT", async () => {
    const extra = { TASKS_TOKEN: 'tok-in-process-0123456789', TASKS_FORMAT: 'text' }
    const s = await open('examples/tasks', extra)
    try {
      const viaMcp = sc(await s.client.callTool({ name: 'whoami', arguments: {} }))
      expect(poolLog(s.stderr()).inProcess).toEqual(['whoami'])
      // The token is the server's env: the read sees it (source env), and it answers JSON whatever FORMAT says.
      expect(viaMcp).toMatchObject({ ok: true, data: { source: 'env' } })
      const cli = env(await tasks(['whoami'], { TASKS_TOKEN: extra.TASKS_TOKEN }))
      expect(withoutDuration(viaMcp)).toEqual(withoutDuration(cli))
      // And the next read, without anything set by the call before it, still sees the server's.
      expect(sc(await s.client.callTool({ name: 'whoami', arguments: {} })).data.source).toBe('env')
    } finally {
      await s.close()
    }
  })

  it('a write, a dry run and a stream still go to a process', async () => {
    const { box: b, s } = plain()
    seed(b, [{ id: '1', title: 'one' }])
    const from = s.stderr().length
    const dry = sc(await s.client.callTool({ name: 'edit', arguments: { id: '1', title: 'x', dry_run: true } }))
    expect(dry.ok).toBe(true)
    const stream = sc(await s.client.callTool({ name: 'export', arguments: {} }))
    expect(stream.ok).toBe(true)
    const del = sc(await s.client.callTool({ name: 'delete', arguments: { ids: ['9'] } }))
    expect(del.error?.code).toMatch(/^E_/)
    expect(processCalls(s, from).map((argv) => argv.split(' ')[0])).toEqual(['edit', 'export', 'delete'])
    expect(poolLog(s.stderr().slice(from)).inProcess).toEqual([])
  })

  it('a read the client gives up on never blocks the server: later calls are served, by it again or by processes', async () => {
    // The fixture as the spawn tier runs it, bundled: each call the server hands a process starts in a fifth of the
    // CPU its modules take.
    const s = await open(relative(ROOT, FIXTURE_ROOT), { FIXTURE_IGNORE_ABORT: '1' })
    try {
      // `hang` ignores its abort signal: the run ends in its own interrupt grace, or the server abandons it after
      // its cut (5 s) and runs every later call as a process. Either way nothing waits on it.
      await expect(s.client.callTool({ name: 'hang', arguments: {} }, { timeout: 1500 })).rejects.toThrow(/timed out/i)
      const settled = () =>
        /every later call starts a process/.test(s.stderr()) || poolLog(s.stderr()).inProcess.at(-1) === 'reference'
      const end = Date.now() + 30_000
      for (;;) {
        expect(Date.now()).toBeLessThan(end)
        expect(sc(await s.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
        if (settled()) break
        // Paced: while `hang` holds the server's run, each call is a process of its own; a few show it is served.
        await new Promise((resolve) => setTimeout(resolve, 400))
      }
      expect(sc(await s.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
      expect(poolLog(s.stderr()).inProcess[0]).toBe('hang')
    } finally {
      await s.close()
    }
  })

  it.each([
    ['process.exit', { how: 'exit' }, /printed no envelope \(exit 3\)/, 'called process.exit\\(3\\)'],
    ['a throw in a timer', { how: 'timer' }, /thrown in a timer \(timer\)/, 'raised an uncaught error'],
  ] as const)(
    'a read that calls %s ends only its call: the server goes on, each later call a process',
    async (_what, args, message, logged) => {
      const s = await open(relative(ROOT, FIXTURE_ROOT))
      try {
        const answer = sc(await s.client.callTool({ name: 'crash', arguments: args }))
        expect(answer.error).toMatchObject({ code: 'E_INTERNAL', message: expect.stringMatching(message) })
        expect(s.stderr()).toMatch(
          new RegExp(
            `^mcp: an in-process call \\(crash --how ${args.how}\\) ${logged}: every later call starts a process$`,
            'm',
          ),
        )
        const from = s.stderr().length
        expect(sc(await s.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
        expect(processCalls(s, from)).toEqual(['reference'])
        expect(poolLog(s.stderr()).inProcess).toEqual([`crash --how ${args.how}`])
      } finally {
        await s.close()
      }
    },
  )

  it("an unhandled rejection is the call's E_INTERNAL, as a process answers it; one left after the answer only ends in-process runs", async () => {
    const s = await open(relative(ROOT, FIXTURE_ROOT))
    try {
      const rejected = sc(await s.client.callTool({ name: 'reject', arguments: {} }))
      expect(rejected.error).toMatchObject({ code: 'E_INTERNAL', message: expect.stringMatching(/nobody caught me/) })
      expect(s.stderr()).toMatch(
        /^mcp: an in-process call \(reject\) raised an uncaught error: every later call starts a process$/m,
      )
      expect(sc(await s.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
    } finally {
      await s.close()
    }
    const late = await open(relative(ROOT, FIXTURE_ROOT))
    try {
      // Answered first: the timer it leaves throws 300 ms later, in the server, which says so and goes on.
      expect(sc(await late.client.callTool({ name: 'crash', arguments: { how: 'later' } }))).toMatchObject({
        ok: true,
        data: { left: 'a timer' },
      })
      const end = Date.now() + 10_000
      while (!/left an uncaught error after its answer/.test(late.stderr())) {
        expect(Date.now()).toBeLessThan(end)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const from = late.stderr().length
      expect(sc(await late.client.callTool({ name: 'reference', arguments: {} })).ok).toBe(true)
      expect(processCalls(late, from)).toEqual(['reference'])
    } finally {
      await late.close()
    }
  })

  it('in_process_reads false: every read is a process of its own', async () => {
    const s = await open('examples/tasks', {}, false)
    try {
      expect(sc(await s.client.callTool({ name: 'list', arguments: {} })).ok).toBe(true)
      expect(processCalls(s)).toEqual(['list'])
      expect(poolLog(s.stderr()).inProcess).toEqual([])
    } finally {
      await s.close()
    }
  })

  it('a value that is not true or false is E_CONFIG naming the setting, before anything is served', async () => {
    const dir = withInProcess('examples/tasks', 'yes')
    const run = await runTool(join(dir, 'bin/run.js'), ['mcp'], { env: box().env })
    expect(run.code).toBe(4)
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: 'E_CONFIG',
      details: { setting: 'agentcli.mcp.in_process_reads', allowed: [true, false], got: 'yes' },
    })
  })
})
