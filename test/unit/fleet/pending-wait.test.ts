import type { Config } from '@oclif/core'
import { describe, expect, it } from 'vitest'
import type { IdempotencyRecord } from '../../../src/confirm/idempotency.js'
import { type SharedPrimitives, sharedIdempotencyLedger } from '../../../src/fleet/ledgers.js'
import { DEFAULT_PENDING_WAIT_MS, pendingWaitMsOf } from '../../../src/fleet/location.js'

/** Just what the settings read of an oclif Config. */
function config(state?: unknown): Config {
  return { bin: 'tasks', dataDir: '/tmp/x', pjson: { agentcli: state === undefined ? {} : { state } } } as never
}

/** An in-memory store where one key is held by another machine's attempt that never finishes. */
function heldStore(): { primitives: SharedPrimitives; reads: () => number } {
  const records = new Map<string, IdempotencyRecord>()
  let reads = 0
  const primitives: SharedPrimitives = {
    store: { backend: 'postgres', where: 'memory' },
    insertMarker: async () => true,
    hasMarker: async () => false,
    deleteMarker: async () => undefined,
    claimRecord: async (id, record) => {
      if (records.has(id)) return false
      records.set(id, record)
      return true
    },
    readRecord: async (id) => {
      reads++
      return records.get(id)
    },
    writeRecord: async (id, record) => void records.set(id, record),
    deleteRecord: async (id) => void records.delete(id),
  }
  return { primitives, reads: () => reads }
}

describe('agentcli.state.pending_wait_ms', () => {
  it('unset is the 10 s default; an integer 0..600000 is taken as is', () => {
    expect(DEFAULT_PENDING_WAIT_MS).toBe(10_000)
    expect(pendingWaitMsOf(config())).toBe(10_000)
    expect(pendingWaitMsOf(config({ url: 'redis://h' }))).toBe(10_000)
    expect(pendingWaitMsOf(config({ pending_wait_ms: 0 }))).toBe(0)
    expect(pendingWaitMsOf(config({ pending_wait_ms: 600_000 }))).toBe(600_000)
  })

  it.each([-1, 1.5, '100', 600_001, null, true])('%j is E_CONFIG naming the setting, never the default', (bad) => {
    let thrown: unknown
    try {
      pendingWaitMsOf(config({ pending_wait_ms: bad }))
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({
      code: 'E_CONFIG',
      details: { setting: 'agentcli.state.pending_wait_ms', allowed: '0..600000', got: bad },
    })
  })

  it('no environment variable sets it: only the tool author decides how long a fleet waits', () => {
    process.env.TASKS_PENDING_WAIT_MS = '0'
    process.env.TASKS_STATE_PENDING_WAIT_MS = '0'
    try {
      expect(pendingWaitMsOf(config())).toBe(DEFAULT_PENDING_WAIT_MS)
    } finally {
      delete process.env.TASKS_PENDING_WAIT_MS
      delete process.env.TASKS_STATE_PENDING_WAIT_MS
    }
  })

  it('0: a key held by an attempt that never finishes is in doubt at once, and nothing is applied', async () => {
    const { primitives, reads } = heldStore()
    const first = sharedIdempotencyLedger(primitives)
    // The first machine's attempt claims the key and never finishes (its store went down after the change).
    const holding = first.run('scope', 'create', 'k', { title: 'x' }, () => new Promise(() => undefined))
    void holding
    await Promise.resolve()
    let applied = 0
    const started = Date.now()
    const second = await sharedIdempotencyLedger(primitives, { pendingWaitMs: 0 })
      .run('scope', 'create', 'k', { title: 'x' }, async () => {
        applied++
      })
      .catch((e: unknown) => e)
    expect(second).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'idempotency_in_doubt' } })
    expect(applied).toBe(0)
    expect(reads()).toBe(1)
    expect(Date.now() - started).toBeLessThan(DEFAULT_PENDING_WAIT_MS)
  })

  it('a wait polls until its deadline, then answers in doubt: never a claim of a key still pending', async () => {
    const { primitives, reads } = heldStore()
    void sharedIdempotencyLedger(primitives).run('scope', 'create', 'k', {}, () => new Promise(() => undefined))
    await Promise.resolve()
    let applied = 0
    const second = await sharedIdempotencyLedger(primitives, { pendingWaitMs: 250 })
      .run('scope', 'create', 'k', {}, async () => {
        applied++
      })
      .catch((e: unknown) => e)
    expect(second).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'idempotency_in_doubt' } })
    expect(applied).toBe(0)
    expect(reads()).toBeGreaterThan(1)
  })
})
