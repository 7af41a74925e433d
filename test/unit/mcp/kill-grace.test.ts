import type { ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { AgentError } from '../../../src/errors/agent-error.js'
import { KILL_GRACE_MS, killGraceOf, stop, track } from '../../../src/mcp/children.js'
import type { ToolConfig } from '../../../src/runtime/tool-config.js'

/**
 * A call's process that ignores every signal until the test ends it. Its PID is far past any real one (pid_max is
 * at most 2^22), so the group signals a stop sends reach nothing.
 */
class Stubborn extends EventEmitter {
  static next = 9_100_000
  pid = Stubborn.next++
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  signals: NodeJS.Signals[] = []
  kill(signal: NodeJS.Signals) {
    this.signals.push(signal)
    return true
  }
  exit() {
    this.signalCode = 'SIGKILL'
    this.emit('exit', null, 'SIGKILL')
  }
}

const config = (mcp?: Record<string, unknown>) => ({ pjson: { agentcli: mcp ? { mcp } : {} } }) as unknown as ToolConfig

afterEach(() => {
  vi.restoreAllMocks()
})

describe("kill_grace_ms: how long a stopped MCP call has before SIGKILL is the tool author's, bounded", () => {
  it('is 5000 unless package.json sets agentcli.mcp.kill_grace_ms; 0..60000 are taken', () => {
    expect(KILL_GRACE_MS).toBe(5000)
    expect(killGraceOf(config())).toBe(5000)
    expect(killGraceOf(config({ warm_processes: 1 }))).toBe(5000)
    for (const n of [0, 250, 60_000]) expect(killGraceOf(config({ kill_grace_ms: n }))).toBe(n)
  })

  it('anything else is E_CONFIG naming the setting and its bounds', () => {
    for (const got of [60_001, -1, 1.5, '250', null, true]) {
      let error: unknown
      try {
        killGraceOf(config({ kill_grace_ms: got }))
      } catch (e) {
        error = e
      }
      expect(error, String(got)).toBeInstanceOf(AgentError)
      expect((error as AgentError).code).toBe('E_CONFIG')
      expect((error as AgentError).details).toEqual({ setting: 'agentcli.mcp.kill_grace_ms', allowed: '0..60000', got })
    }
  })

  it('no environment variable sets it', () => {
    process.env.TASKS_KILL_GRACE_MS = '0'
    process.env.TASKS_MCP_KILL_GRACE_MS = '0'
    try {
      expect(killGraceOf({ ...config(), bin: 'tasks' } as ToolConfig)).toBe(KILL_GRACE_MS)
    } finally {
      delete process.env.TASKS_KILL_GRACE_MS
      delete process.env.TASKS_MCP_KILL_GRACE_MS
    }
  })

  it('a call tracked with a grace is stopped with it: SIGKILL once that grace is over, whoever stops it', async () => {
    const logged: string[] = []
    let killed: () => void = () => undefined
    const sigkill = new Promise<void>((resolve) => {
      killed = resolve
    })
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      logged.push(String(chunk))
      if (String(chunk).includes('SIGKILL')) killed()
      return true
    })
    const child = new Stubborn()
    track(child as unknown as ChildProcess, 40)
    const stopped = stop(child as unknown as ChildProcess, 'SIGINT')
    // Asking again returns the same stop (its grace is the tracked one, not the default).
    expect(stop(child as unknown as ChildProcess, 'SIGTERM')).toBe(stopped)
    await sigkill
    expect(logged.join('')).toContain(`mcp: pid ${child.pid} still running 40 ms after SIGINT: SIGKILL`)
    child.exit()
    await stopped
  })
})
