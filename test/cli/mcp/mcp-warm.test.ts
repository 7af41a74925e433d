import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { editJson, useToolCopy } from '../../support/copy.js'
import { alive, env, seed, until, useSandbox } from '../../support/helpers.js'
import { openSession, type Session, sc, withoutDuration } from '../../support/mcp-session.js'
import { poolLog } from '../../support/warm-log.js'

/** Every PID this file saw started (servers, calls, warm processes): whatever is left is killed by PID. */
const started = new Set<number>()
afterEach(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL')
  started.clear()
})

const pidsOf = (log: string, pattern: RegExp) => [...log.matchAll(pattern)].map((m) => Number(m[1]))
/** The warm processes the server said are ready, in order. */
const readyPids = (s: Session) => pidsOf(s.stderr(), /mcp: warm process ready \(pid (\d+)\)/g)
/** The calls the server started, with whether a warm process took each. */
const calls = (s: Session) =>
  [...s.stderr().matchAll(/mcp: (.+) \(pid (\d+)\)( warm)?\n/g)]
    .filter((m) => !m[1]!.startsWith('warm process'))
    .map((m) => ({ argv: m[1]!, pid: Number(m[2]), warm: m[3] !== undefined }))
/** The server's own child processes right now (Linux `ps`, which exits 1 when there is none). */
function childrenOf(pid: number): number[] {
  let out = ''
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
  } catch (error) {
    if ((error as { status?: number }).status !== 1) throw error
  }
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0)
}

const get1 = (s: Session) => s.client.callTool({ name: 'get', arguments: { id: '1' } })

describe('tool mcp: warm processes (agentcli.mcp.warm_processes, 2 by default)', () => {
  const box = useSandbox()
  const copy = useToolCopy()
  /**
   * A copy of the example whose reads all run as processes (`in_process_reads` false; on by default, the server
   * would run a free `get` itself), with `mcp` settings of its own on top; its bin.
   */
  const processReads = (mcp: Record<string, unknown> = {}) =>
    join(
      copy('examples/tasks', (d) =>
        editJson(join(d, 'package.json'), (pkg) => {
          pkg.agentcli = { ...(pkg.agentcli as object), mcp: { in_process_reads: false, ...mcp } }
        }),
      ),
      'bin/run.js',
    )
  /** `get 1` on the CLI of `bin` (its next-step hints name that bin). */
  const cliGet1 = async (bin: string) =>
    env(await runTool(bin, ['get', '1'], { env: box().env, validateOutput: false }))

  it('the first call goes to a ready warm process, which then exits; the pool refills, never past 2', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const bin = processReads()
    const s = await openSession(box(), { bin })
    started.add(s.pid()!)
    try {
      const ready = await until(() => (readyPids(s).length >= 2 ? readyPids(s) : undefined))
      for (const pid of ready) started.add(pid)
      const cli = await cliGet1(bin)
      const first = sc(await get1(s))
      expect(withoutDuration(first)).toEqual(withoutDuration(cli))
      const [call] = calls(s)
      expect(call).toMatchObject({ argv: 'get 1', warm: true })
      expect(ready).toContain(call!.pid)
      // One call per process: it is gone, and another is started in its place.
      await until(() => (alive(call!.pid) ? undefined : true))
      const refilled = await until(() => (readyPids(s).length >= 3 ? readyPids(s) : undefined))
      for (const pid of refilled) started.add(pid)
      const second = sc(await get1(s))
      expect(withoutDuration(second)).toEqual(withoutDuration(cli))
      const [, next] = calls(s)
      expect(next!.warm).toBe(true)
      expect(next!.pid).not.toBe(call!.pid)
      // Never more than 2 waiting: the server's children are the warm processes not yet handed a call.
      await until(() => (readyPids(s).length >= 4 ? true : undefined))
      const waiting = readyPids(s).filter((pid) => !calls(s).some((c) => c.pid === pid))
      expect(waiting).toHaveLength(2)
      expect(childrenOf(s.pid()!).sort()).toEqual(waiting.sort())
    } finally {
      await s.close()
    }
  })

  it('calls beyond the ready processes start cold, with the same envelopes', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const bin = processReads()
    const s = await openSession(box(), { bin })
    started.add(s.pid()!)
    try {
      await until(() => (readyPids(s).length >= 2 ? true : undefined))
      const cli = withoutDuration(await cliGet1(bin))
      // Six at once against two ready processes: at most two plus whatever replacement got ready meanwhile are warm.
      const results = await Promise.all(Array.from({ length: 6 }, () => get1(s)))
      for (const r of results) expect(withoutDuration(sc(r))).toEqual(cli)
      for (const c of calls(s)) started.add(c.pid)
      expect(calls(s)).toHaveLength(6)
      // The two ready processes take the first calls; a call goes cold only while no process is ready (the log's
      // order, not a timing window, decides).
      expect(
        calls(s)
          .slice(0, 2)
          .map((c) => c.warm),
      ).toEqual([true, true])
      expect(poolLog(s.stderr()).violations).toEqual([])
    } finally {
      await s.close()
    }
  })

  it("the server's shutdown ends its warm processes by PID: none is left", async () => {
    const s = await openSession(box())
    const server = s.pid()!
    started.add(server)
    const ready = await until(() => (readyPids(s).length >= 2 ? readyPids(s) : undefined))
    const children = childrenOf(server)
    for (const pid of [...ready, ...children]) started.add(pid)
    expect(children.length).toBeGreaterThanOrEqual(2)
    await s.close()
    await until(() => (alive(server) ? undefined : true))
    await until(() => ([...ready, ...children].some(alive) ? undefined : true))
  })

  it('a server killed outright leaves no warm process: each ends when its channel closes', async () => {
    const s = await openSession(box())
    const server = s.pid()!
    started.add(server)
    const ready = await until(() => (readyPids(s).length >= 2 ? readyPids(s) : undefined))
    for (const pid of ready) started.add(pid)
    process.kill(server, 'SIGKILL')
    await until(() => (ready.some(alive) ? undefined : true))
    await s.close().catch(() => undefined)
  })

  it('warm_processes 0 turns the pool off: every call starts cold', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const s = await openSession(box(), { bin: processReads({ warm_processes: 0 }) })
    started.add(s.pid()!)
    try {
      for (let i = 0; i < 2; i++) expect(sc(await get1(s)).ok).toBe(true)
      for (const c of calls(s)) started.add(c.pid)
      expect(calls(s).map((c) => c.warm)).toEqual([false, false])
      expect(readyPids(s)).toEqual([])
      expect(childrenOf(s.pid()!)).toEqual([])
    } finally {
      await s.close()
    }
  })

  it('a number out of bounds is E_CONFIG naming the setting, before anything is served', async () => {
    const dir = copy('examples/tasks', (d) =>
      editJson(join(d, 'package.json'), (pkg) => {
        pkg.agentcli = { ...(pkg.agentcli as object), mcp: { warm_processes: 9 } }
      }),
    )
    const run = await runTool(join(dir, 'bin/run.js'), ['mcp'], { env: box().env })
    expect(run.code).toBe(4)
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: 'E_CONFIG',
      details: { setting: 'agentcli.mcp.warm_processes', allowed: '0..8', got: 9 },
    })
  })
})
