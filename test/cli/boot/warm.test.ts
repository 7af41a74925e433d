import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { WARM_FLAG, WARM_MESSAGE } from '../../../src/boot/warm.js'
import { alive, env, seed, storeBytes, TASKS_BIN, tasks, until, useSandbox } from '../../support/helpers.js'

const box = useSandbox({ ownCodeCache: true })

/** Every process this file started, killed by PID afterwards if one is left. */
const started = new Set<number>()
afterEach(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL')
  started.clear()
})

type Warm = { child: ChildProcess; stdout(): string; stderr(): string; exited: Promise<number | null> }

/** The tool started as `tool mcp`'s pool starts it (src/mcp/run-call.ts startWarm), once it says it is ready. */
async function warmProcess(args: string[] = [WARM_FLAG], ipc = true): Promise<Warm & { ready: boolean }> {
  const child = spawn(process.execPath, [TASKS_BIN, ...args], {
    env: { PATH: process.env.PATH, ...box().env },
    stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? (['ipc'] as const) : [])],
  })
  started.add(child.pid!)
  let out = ''
  let err = ''
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8')
  })
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString('utf8')
  })
  // 'exit' and both streams read to their end: a parent that closed the channel itself never hears 'close'.
  const closed = (stream: NodeJS.ReadableStream) => new Promise((resolve) => stream.once('close', resolve))
  const exited = Promise.all([
    new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    closed(child.stdout!),
    closed(child.stderr!),
  ]).then(([code]) => code)
  const ready = ipc
    ? await Promise.race([
        new Promise<boolean>((resolve) =>
          child.once('message', (m: { type?: string }) => resolve(m?.type === WARM_MESSAGE.ready)),
        ),
        exited.then(() => false),
      ])
    : false
  return { child, stdout: () => out, stderr: () => err, exited, ready }
}

const call = (argv: string[], extra: Record<string, string> = {}) => ({ type: WARM_MESSAGE.call, argv, env: extra })

describe('a warm process (the child side of tool mcp --warm processes): one call, then gone', () => {
  it('runs the call it is handed exactly as a cold start does, then exits; a second message is never run', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const before = storeBytes(box())
    const w = await warmProcess()
    expect(w.ready).toBe(true)
    // Nothing is printed before the call: stdout carries exactly the call's envelope.
    expect(w.stdout()).toBe('')
    w.child.send(call(['get', '1']))
    // Sent at once behind the first: a call of its own (it would print an envelope and an audit line), never run.
    w.child.send(call(['create', '--title', 'sneaked', '--dry-run']), () => undefined)
    w.child.on('error', () => undefined)
    const code = await w.exited
    const cold = await tasks(box(), ['get', '1'])
    expect(code).toBe(cold.code)
    const { duration_ms: _a, ...warmMeta } = JSON.parse(w.stdout()).meta
    const { duration_ms: _b, ...coldMeta } = env(cold).meta
    expect({ ...JSON.parse(w.stdout()), meta: warmMeta }).toEqual({ ...env(cold), meta: coldMeta })
    expect(w.stdout().trim().split('\n')).toHaveLength(1)
    expect(storeBytes(box())).toBe(before)
    expect(existsSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'))).toBe(false)
    expect(alive(w.child.pid!)).toBe(false)
  })

  it('a message that is not a call runs nothing: the process ends with no envelope', async () => {
    const w = await warmProcess()
    expect(w.ready).toBe(true)
    w.child.send({ type: WARM_MESSAGE.call, argv: ['list', 5], env: {} })
    await w.exited
    expect(w.stdout()).toBe('')
    expect(w.child.signalCode).toBe('SIGKILL')
  })

  it('the parent closing the channel (the pool stopping) ends an idle warm process, having printed nothing', async () => {
    const w = await warmProcess()
    expect(w.ready).toBe(true)
    w.child.disconnect()
    await w.exited
    expect(w.stdout()).toBe('')
    expect(alive(w.child.pid!)).toBe(false)
  })

  it('a warm process whose parent dies exits (its channel closes)', async () => {
    // A parent of its own, which starts a warm process, prints its PID once ready, then is SIGKILLed.
    const body = `const c=require('node:child_process').spawn(process.execPath,[${JSON.stringify(TASKS_BIN)},${JSON.stringify(WARM_FLAG)}],{stdio:['ignore','ignore','ignore','ipc']});c.on('message',()=>console.log(c.pid))`
    const parent = spawn(process.execPath, ['-e', body], {
      env: { PATH: process.env.PATH, ...box().env },
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    started.add(parent.pid!)
    let out = ''
    parent.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8')
    })
    const pid = await until(() => (/^(\d+)\n/.exec(out) ? Number(/^(\d+)/.exec(out)![1]) : undefined))
    started.add(pid)
    expect(alive(pid)).toBe(true)
    parent.kill('SIGKILL')
    await until(() => (alive(pid) ? undefined : true))
  })

  it('each process runs with the environment its call carries: one principal per process, none carried over', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const subject = (sub: string) => ({ TASKS_MCP_SUBJECT: JSON.stringify({ iss: 'local', sub }) })
    for (const extra of [subject('ann'), subject('bob'), {}]) {
      const w = await warmProcess()
      expect(w.ready).toBe(true)
      w.child.send(call(['create', '--title', 'a task', '--dry-run'], extra))
      expect(await w.exited).toBe(0)
    }
    const audit = readFileSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r.command === 'create')
    expect(audit).toHaveLength(3)
    expect(audit[0]!.subject).toBe('ann (local)')
    expect(audit[1]!.subject).toBe('bob (local)')
    expect(String(audit[2]!.subject)).not.toMatch(/ann|bob/)
  })
})

describe("a warm process's code cache: its own file, covering what the calls it was handed ran", () => {
  const cacheDir = () => join(box().env.XDG_CACHE_HOME!, 'agentcli', 'code-cache')
  const warmCache = () => readdirSync(cacheDir()).filter((n) => n.endsWith('+warm.v8'))
  const covers = () => {
    const bytes = readFileSync(join(cacheDir(), warmCache()[0]!))
    const start = 'agentcli-code-cache 1\n'.length
    return JSON.parse(bytes.toString('utf8', start + 4, start + 4 + bytes.readUInt32LE(start))).covers
  }

  it("written at exit under the key of the call (never a cold command's file); one stopped idle writes nothing", async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    // The server's own start (a cold one) made the directory; a warm process never does.
    expect((await tasks(box(), ['--version'])).code).toBe(0)
    const cold = readdirSync(cacheDir()).sort()
    const idle = await warmProcess()
    expect(idle.ready).toBe(true)
    idle.child.disconnect()
    await idle.exited
    expect(readdirSync(cacheDir()).sort()).toEqual(cold)
    for (const argv of [
      ['get', '1'],
      ['list', '--status', 'open'],
    ]) {
      const w = await warmProcess()
      expect(w.ready).toBe(true)
      w.child.send(call(argv))
      expect(await w.exited).toBe(0)
    }
    expect(warmCache()).toHaveLength(1)
    expect(covers()).toEqual(['get', 'list --status'])
    // The cold caches are the CLI's own: a warm process wrote none of them.
    expect(readdirSync(cacheDir()).sort()).toEqual([...cold, ...warmCache()].sort())
  })

  it('an idle warm process writes nothing at all in its home (its server may be removing it)', async () => {
    const tree = () => readdirSync(box().root, { recursive: true }).map(String).sort()
    const before = tree()
    const idle = await warmProcess()
    expect(idle.ready).toBe(true)
    idle.child.disconnect()
    await idle.exited
    expect(tree()).toEqual(before)
  })
})

describe('only a parent that spawned it with a channel, and said so, makes a process wait', () => {
  it('the flag without an IPC channel is an unknown argument: E_USAGE at once', async () => {
    const w = await warmProcess([WARM_FLAG], false)
    expect(await w.exited).toBe(2)
    expect(JSON.parse(w.stdout()).error.code).toBe('E_USAGE')
  })

  it('a channel without the flag, or the flag among other arguments, runs the command at once', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const plain = await warmProcess(['get', '1'])
    expect(plain.ready).toBe(false)
    expect(await plain.exited).toBe(0)
    expect(JSON.parse(plain.stdout()).data.id).toBe('1')
    const mixed = await warmProcess([WARM_FLAG, 'get', '1'])
    expect(mixed.ready).toBe(false)
    expect(await mixed.exited).toBe(2)
    expect(JSON.parse(mixed.stdout()).error.code).toBe('E_USAGE')
  })
})
