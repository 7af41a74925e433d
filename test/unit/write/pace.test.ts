/**
 * Batch pacing and bounds (src/write/pace.ts, src/write/batch-limit.ts), in process: a long loop over a batch lets
 * a signal handler run and stops with E_INTERRUPTED marked as preceding any change; a batch over its command's
 * bound is E_VALIDATION naming the bound and the count.
 */
import { describe, expect, it } from 'vitest'
import { AgentError } from '../../../src/errors/agent-error.js'
import { isBeforeChange } from '../../../src/errors/before-change.js'
import { stopIfInterrupted } from '../../../src/errors/interrupted.js'
import { checkBatchSize, DEFAULT_MAX_BATCH_ITEMS } from '../../../src/write/batch-limit.js'
import { mapPaced, SLICE_MS } from '../../../src/write/pace.js'

/** Hold the CPU for `ms` of wall time, as a slow item of a synchronous loop would. */
function spin(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {}
}

const interrupted = () => new AgentError('E_INTERRUPTED', 'interrupted by SIGINT', { details: { signal: 'SIGINT' } })

describe('mapPaced', () => {
  it('maps every item in order when no signal comes', async () => {
    const controller = new AbortController()
    expect(await mapPaced([1, 2, 3], (n, i) => n * 10 + i, controller.signal)).toEqual([10, 21, 32])
  })

  it('yields inside a long synchronous loop: an abort queued behind it runs, and the loop stops there', async () => {
    const controller = new AbortController()
    const reason = interrupted()
    // Queued before the loop starts: it can run only if the loop gives the event loop a turn.
    setImmediate(() => controller.abort(reason))
    const total = 200
    let done = 0
    // Each item holds the CPU for a fifth of a slice: the loop must yield after a few items, whatever the load.
    const error = await mapPaced(
      Array.from({ length: total }, (_, i) => i),
      () => {
        spin(SLICE_MS / 5)
        done++
      },
      controller.signal,
    ).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBe(reason)
    expect(isBeforeChange(error)).toBe(true)
    expect(done).toBeGreaterThan(0)
    expect(done).toBeLessThan(total)
  })

  it('starts nothing after a signal already arrived', async () => {
    const controller = new AbortController()
    controller.abort(interrupted())
    let calls = 0
    await expect(mapPaced([1, 2], () => calls++, controller.signal)).rejects.toMatchObject({ code: 'E_INTERRUPTED' })
    expect(calls).toBe(0)
  })

  it('stopIfInterrupted: nothing before a signal; a reason that is not an AgentError becomes E_INTERRUPTED', () => {
    const controller = new AbortController()
    expect(() => stopIfInterrupted(controller.signal)).not.toThrow()
    controller.abort()
    let thrown: unknown
    try {
      stopIfInterrupted(controller.signal)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ code: 'E_INTERRUPTED' })
    expect(isBeforeChange(thrown)).toBe(true)
  })
})

describe('checkBatchSize', () => {
  const declared = { ids: { multiple: true }, note: { multiple: false } }

  it('lets a batch up to its bound through, counting the values of variadic arguments only', () => {
    expect(() => checkBatchSize('tasks:delete', declared, { ids: ['1', '2'], note: 'x' }, 2)).not.toThrow()
    expect(() => checkBatchSize('tasks:edit', { id: {} }, { id: '1' }, 0)).not.toThrow()
    expect(DEFAULT_MAX_BATCH_ITEMS).toBe(10_000)
  })

  it('refuses one item more with E_VALIDATION: allowed names the bound, got the count', () => {
    let thrown: AgentError | undefined
    try {
      checkBatchSize('delete', declared, { ids: ['1', '2', '3'] }, 2)
    } catch (error) {
      thrown = error as AgentError
    }
    expect(thrown).toMatchObject({
      code: 'E_VALIDATION',
      details: { allowed: { max_items: 2 }, got: 3, param: 'ids' },
    })
    expect(thrown?.message).toBe('delete takes at most 2 items in one call (got 3); split the batch')
  })
})
