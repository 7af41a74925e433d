import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { env, ROOT, seed, useSandbox } from '../../support/helpers.js'
import { FIXTURE_ROOT, fixtureInProcess, stubbornHang, tasksInProcess } from '../../support/in-process.js'

/*
 * `run(root, { io })`: a run in this process is the caller's guest. It leaves the process's handlers and
 * environment alone, and each run starts as a new process would, whatever the one before it registered.
 */
const box = useSandbox()
const HANDLED = ['SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection'] as const
/** agentcli as the tool's modules see it (dist/, the instance their run sets and reads: see support/in-process.ts). */
const dist = <T>(path: string) => import(/* @vite-ignore */ pathToFileURL(join(ROOT, 'dist', path)).href) as Promise<T>

describe('an in-process run', () => {
  it('adds no process handler and reads its environment from io.env, not process.env', async () => {
    const before = HANDLED.map((event) => process.listenerCount(event))
    const envBefore = { ...process.env }
    const text = await tasksInProcess(box(), ['--version'], { env: { TASKS_FORMAT: 'text' } })
    expect([text.code, text.stdout]).toEqual([0, 'tasks 0.1.0\n'])
    // The same process, the next run without the setting: JSON again.
    const json = await tasksInProcess(box(), ['--version'])
    expect(env(json).data).toEqual({ tool: 'tasks', version: '0.1.0' })
    expect(HANDLED.map((event) => process.listenerCount(event))).toEqual(before)
    expect(process.env).toEqual(envBefore)
  })

  it("gives the caller back its environment, stderr, run state and stdin, and never reads the caller's stdin", async () => {
    const { runEnv } = await dist<typeof import('../../../src/settings/run-env.js')>('settings/run-env.js')
    const { getRunState } = await dist<typeof import('../../../src/runtime/run-state.js')>('runtime/run-state.js')
    const { stderrStream } = await dist<typeof import('../../../src/output/stderr.js')>('output/stderr.js')
    seed(box(), [{ id: '1', title: 'one' }])
    // The caller's stdin holds an id: a run that read it would fill `get`'s missing argument and answer task 1.
    const own = Object.getOwnPropertyDescriptor(process, 'stdin')!
    const oclifGlobal = (globalThis as { oclif?: unknown }).oclif
    const callers = Readable.from(['1\n'])
    Object.defineProperty(process, 'stdin', { value: callers, configurable: true, writable: true })
    try {
      const missing = await tasksInProcess(box(), ['get'], { env: { TASKS_FORMAT: 'json' } })
      expect(missing.code).toBe(2)
      expect(env(missing).error.code).toBe('E_USAGE')
      expect(process.stdin).toBe(callers)
      expect(callers.readableEnded).toBe(false)
    } finally {
      Object.defineProperty(process, 'stdin', own)
      // oclif's parser caches what it read from stdin for the process: the caller's state, as it was.
      ;(globalThis as { oclif?: unknown }).oclif = oclifGlobal
    }
    expect(runEnv()).toBe(process.env)
    expect(getRunState()).toBeUndefined()
    expect(stderrStream()).toBe(process.stderr)
  })

  it("forgets the secrets of the run before: a token held by one run is not the next one's to hide", async () => {
    seed(box(), [{ id: '1', title: 'secret-value-123' }])
    const holding = await tasksInProcess(box(), ['get', '1'], { env: { TASKS_TOKEN: 'secret-value-123' } })
    expect(env(holding).data.title).toBe('<redacted>')
    const after = await tasksInProcess(box(), ['get', '1'])
    expect(env(after).data.title).toBe('secret-value-123')
  })

  it('a write leaves its audit record and nothing pending for the next run', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    expect((await tasksInProcess(box(), ['edit', '1', '--status', 'done', '--dry-run'])).code).toBe(0)
    const read = await tasksInProcess(box(), ['list'])
    expect(read.code).toBe(0)
    const { readFileSync } = await import('node:fs')
    const lines = readFileSync(`${box().env.XDG_DATA_HOME}/tasks/audit.jsonl`, 'utf8').trimEnd().split('\n')
    // One line: the dry-run's. The read after it wrote none, not even the write's leftover draft.
    expect(lines.map((l) => JSON.parse(l).command)).toEqual(['edit'])
  })

  it('ends in E_INTERRUPTED (exit 130) when the caller aborts io.signal, and resolves instead of exiting', async () => {
    // Aborted before the run opened, and (most likely) while the command waits: either way one E_INTERRUPTED.
    const early = new AbortController()
    early.abort()
    const late = new AbortController()
    setTimeout(() => late.abort(), 200)
    for (const signal of [early.signal, late.signal]) {
      const run = await fixtureInProcess(box(), ['hang'], { signal })
      expect(run.code).toBe(130)
      expect(env(run).error).toMatchObject({ code: 'E_INTERRUPTED', details: { signal: 'SIGINT' } })
      expect(run.stderr).toContain('received SIGINT, stopping')
    }
  })

  it("a run its caller gave up on, ending after the next run opened, writes no record of that run's and leaves its state", async () => {
    // Seen as stray `E_INTERRUPTED` audit lines of another test's write, 2 s (the grace) after a cancelled `hang` the
    // caller stopped waiting for: its late end took the pending record of whatever run was current.
    const { run } = await dist<{ run: (root: string, options: object) => Promise<number> }>('runtime/entry.js')
    const { getRunState } = await dist<{ getRunState: () => unknown }>('runtime/run-state.js')
    // Its envelope, printed when its grace ends (the command itself ignores the cancel and is never waited for).
    let printed: (text: string) => void = () => undefined
    const envelope = new Promise<string>((resolve) => {
      printed = resolve
    })
    const quiet = { stdout: (chunk: string | Uint8Array) => printed(String(chunk)), stderr: () => undefined }
    const giveUp = new AbortController()
    // Cancelled once it surely waits, and ignoring it: its session lives on for its grace.
    const hang = stubbornHang()
    try {
      void run(FIXTURE_ROOT, {
        argv: ['hang'],
        interruptGraceMs: 1_000,
        io: {
          ...quiet,
          env: { ...box().env, PATH: process.env.PATH ?? '' },
          script: join(FIXTURE_ROOT, 'bin/run.js'),
          signal: giveUp.signal,
        },
      })
      await hang.ready
      giveUp.abort()
      // The caller moves on at once: a refused write, with its audit record, while the abandoned run waits out its
      // grace.
      const refused = await tasksInProcess(box(), ['edit', '99', '--status', 'nope'])
      expect(env(refused).error.code).toBe('E_VALIDATION')
      const state = getRunState()
      expect(JSON.parse(await envelope).error.code).toBe('E_INTERRUPTED')
      // Its end goes on after the envelope (render → audit → end) on promises alone, the audit module already loaded:
      // a turn of the event loop lets it finish.
      await new Promise((resolve) => setImmediate(resolve))
      const audit = readFileSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
        .trimEnd()
        .split('\n')
      expect(audit.map((l) => JSON.parse(l).result_code)).toEqual(['E_VALIDATION'])
      expect(getRunState()).toBe(state)
    } finally {
      hang.restore()
    }
  })
})
