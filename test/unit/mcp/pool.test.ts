import type { ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { WARM_MESSAGE } from '../../../src/boot/warm.js'
import { AgentError } from '../../../src/errors/agent-error.js'
import { DEFAULT_WARM_PROCESSES, MAX_EARLY_EXITS, openPools, warmPool, warmProcessesOf } from '../../../src/mcp/pool.js'
import type { ToolConfig } from '../../../src/runtime/tool-config.js'

/**
 * A stand-in for a spawned warm process. Its PID is far past any real one (pid_max is at most 2^22), so a group
 * signal the pool sends it reaches nothing.
 */
class Fake extends EventEmitter {
  static next = 9_000_000
  pid = Fake.next++
  connected = true
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  disconnected = 0
  channel = { unref: () => undefined }
  ready() {
    this.emit('message', { type: WARM_MESSAGE.ready })
  }
  exit(code = 0) {
    this.exitCode = code
    this.connected = false
    this.emit('exit', code, null)
  }
  disconnect() {
    this.disconnected++
    this.connected = false
    // An idle warm process ends itself once its channel closes.
    setImmediate(() => this.exit(0))
  }
}

function spawner() {
  const made: Fake[] = []
  return {
    made,
    start: () => {
      const f = new Fake()
      made.push(f)
      return f as unknown as ChildProcess
    },
  }
}

const turn = () => new Promise((r) => setImmediate(r))

const config = (mcp?: Record<string, unknown>) => ({ pjson: { agentcli: mcp ? { mcp } : {} } }) as unknown as ToolConfig

describe("warm_processes: the number of warm processes is the tool author's, bounded", () => {
  it('is 2 unless package.json sets agentcli.mcp.warm_processes; 0..8 are taken', () => {
    expect(warmProcessesOf(config())).toBe(DEFAULT_WARM_PROCESSES)
    expect(DEFAULT_WARM_PROCESSES).toBe(2)
    for (const n of [0, 1, 8]) expect(warmProcessesOf(config({ warm_processes: n }))).toBe(n)
  })

  it('anything else is E_CONFIG naming the setting and its bounds', () => {
    for (const got of [9, -1, 1.5, '2', null, true]) {
      let error: unknown
      try {
        warmProcessesOf(config({ warm_processes: got }))
      } catch (e) {
        error = e
      }
      expect(error, String(got)).toBeInstanceOf(AgentError)
      expect((error as AgentError).code).toBe('E_CONFIG')
      expect((error as AgentError).details).toEqual({ setting: 'agentcli.mcp.warm_processes', allowed: '0..8', got })
    }
  })
})

describe('the warm pool', () => {
  it('starts `size` processes; hands out only ready ones; a replacement starts at once; never more than `size`', async () => {
    const s = spawner()
    const readied: number[] = []
    const pool = warmPool(s.start, 2, (pid) => readied.push(pid))
    try {
      expect(s.made).toHaveLength(2)
      expect(pool.take()).toBeUndefined()
      s.made[0]!.ready()
      expect(readied).toEqual([s.made[0]!.pid])
      const taken = pool.take()
      expect(taken).toBe(s.made[0])
      // The replacement starts on the next turn, after the call was handed over.
      expect(s.made).toHaveLength(2)
      await turn()
      expect(s.made).toHaveLength(3)
      expect(pool.held()).toHaveLength(2)
      expect(pool.held()).not.toContain(taken)
      // The one handed out is no longer the pool's: its exit starts nothing more.
      s.made[0]!.exit(0)
      expect(s.made).toHaveLength(3)
      for (let round = 0; round < 10; round++) {
        for (const f of s.made) if (f.exitCode === null && pool.held().includes(f as never)) f.ready()
        const t = pool.take() as unknown as Fake
        expect(t).toBeDefined()
        t.exit(0)
        await turn()
        expect(pool.held().length).toBeLessThanOrEqual(2)
      }
      expect(pool.held()).toHaveLength(2)
    } finally {
      await pool.close()
    }
  })

  it('a process that said something other than ready, or is gone, is never handed a call', async () => {
    const s = spawner()
    const pool = warmPool(s.start, 2)
    try {
      s.made[0]!.emit('message', { type: 'something else' })
      s.made[1]!.ready()
      s.made[1]!.connected = false
      expect(pool.take()).toBeUndefined()
      expect(pool.held()).not.toContain(s.made[0])
      // Saying ready twice is not a process of ours either; each one dropped is replaced.
      s.made[1]!.connected = true
      s.made[1]!.ready()
      expect(pool.take()).toBeUndefined()
      expect(pool.held()).not.toContain(s.made[1])
      expect(pool.held()).toHaveLength(2)
      expect(s.made).toHaveLength(4)
    } finally {
      await pool.close()
    }
  })

  it('a ready process that dies while idle is replaced', async () => {
    const s = spawner()
    const pool = warmPool(s.start, 1)
    try {
      s.made[0]!.ready()
      s.made[0]!.exit(1)
      expect(s.made).toHaveLength(2)
      expect(pool.take()).toBeUndefined()
      s.made[1]!.ready()
      expect(pool.take()).toBe(s.made[1])
    } finally {
      await pool.close()
    }
  })

  it(`turns itself off after ${MAX_EARLY_EXITS} processes in a row end before they are ready`, async () => {
    const s = spawner()
    const pool = warmPool(s.start, 1)
    try {
      for (let i = 0; i < MAX_EARLY_EXITS; i++) s.made[i]!.exit(4)
      expect(pool.disabled()).toBe(true)
      expect(s.made).toHaveLength(MAX_EARLY_EXITS)
      expect(pool.take()).toBeUndefined()
    } finally {
      await pool.close()
    }
  })

  it('a spawn that throws turns it off', async () => {
    const pool = warmPool(() => {
      throw new Error('E2BIG')
    }, 2)
    expect(pool.disabled()).toBe(true)
    expect(pool.held()).toEqual([])
    await pool.close()
  })

  it('size 0 starts nothing', async () => {
    const s = spawner()
    const pool = warmPool(s.start, 0)
    expect(s.made).toEqual([])
    expect(pool.take()).toBeUndefined()
    await pool.close()
  })

  it('close: every idle process has its channel closed and has exited; none starts again; the pool is no longer open', async () => {
    const s = spawner()
    const pool = warmPool(s.start, 2)
    expect(openPools()).toContain(pool)
    s.made[0]!.ready()
    // One still starting with its channel gone: ended by PID instead.
    s.made[1]!.connected = false
    setImmediate(() => s.made[1]!.exit(0))
    await pool.close()
    expect(s.made[0]!.disconnected).toBe(1)
    expect(s.made.every((f) => f.exitCode !== null)).toBe(true)
    expect(s.made).toHaveLength(2)
    expect(openPools()).not.toContain(pool)
    expect(pool.take()).toBeUndefined()
  })
})
