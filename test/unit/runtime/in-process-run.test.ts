import { describe, expect, it } from 'vitest'
import { env, seed, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess, tasksInProcess } from '../../support/in-process.js'

/*
 * `run(root, { io })`: a run in this process is the caller's guest. It leaves the process's handlers and
 * environment alone, and each run starts as a new process would, whatever the one before it registered.
 */
const box = useSandbox()
const HANDLED = ['SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection'] as const

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
})
