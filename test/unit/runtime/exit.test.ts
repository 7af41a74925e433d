import { afterEach, describe, expect, it, vi } from 'vitest'
import { EXIT_BACKSTOP_MS, type ExitingProcess, exitProcess } from '../../../src/runtime/exit.js'

/** A process whose loop holds `resources`; `exit` records its code (and returns, as no real exit would). */
function proc(resources: string[]): ExitingProcess & { exits: number[] } {
  const exits: number[] = []
  return {
    exits,
    exitCode: undefined,
    exit: ((code: number) => {
      exits.push(code)
    }) as never,
    getActiveResourcesInfo: () => resources,
  }
}

/** The loop's turn the exit waits for (two immediates). */
async function turn(): Promise<void> {
  await vi.runOnlyPendingTimersAsync()
  await vi.runOnlyPendingTimersAsync()
}

afterEach(() => {
  vi.useRealTimers()
})

describe('a process ends by its loop when nothing but the standard streams and requests holds it', () => {
  it.each([
    [[]],
    [['PipeWrap']],
    [['TTYWrap', 'PipeWrap', 'PipeWrap']],
    [['FSReqPromise', 'CloseReq', 'FSReqCallback', 'WriteWrap']],
  ])(
    'holding %j: the code is set at once; a turn later it resolves with it, process.exit uncalled',
    async (resources) => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] })
      const p = proc(resources)
      let resolved: number | undefined
      void exitProcess(3, p).then((code) => (resolved = code))
      expect(p.exitCode).toBe(3)
      await turn()
      expect(resolved).toBe(3)
      await vi.advanceTimersByTimeAsync(EXIT_BACKSTOP_MS - 1)
      expect(p.exits).toEqual([])
    },
  )

  it('a handle that finishes closing in the turn the exit waits (a child just reaped) does not cut it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] })
    let closing = true
    const p = { ...proc([]), getActiveResourcesInfo: () => (closing ? ['ProcessWrap', 'PipeWrap'] : ['PipeWrap']) }
    let resolved: number | undefined
    void exitProcess(0, p).then((code) => (resolved = code))
    // Its close callback: in this turn of the loop, after the exit's first immediate.
    setImmediate(() => {
      closing = false
    })
    await turn()
    expect(p.exits).toEqual([])
    expect(resolved).toBe(0)
  })

  it('a stream still read (stdin, a channel) holds the loop past the backstop: the process is cut then', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] })
    const p = proc(['PipeWrap'])
    void exitProcess(0, p)
    await turn()
    await vi.advanceTimersByTimeAsync(EXIT_BACKSTOP_MS - 1)
    expect(p.exits).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(p.exits).toEqual([0])
  })

  it('the backstop never holds the loop itself (it is unref’d)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] })
    const p = proc([])
    const unref = vi.fn()
    const real = setTimeout
    void exitProcess(1, p)
    const spy = vi
      .spyOn(globalThis, 'setTimeout')
      .mockImplementation(((fn: () => void, ms: number) =>
        ms === EXIT_BACKSTOP_MS ? { unref } : real(fn, ms)) as never)
    try {
      await turn()
    } finally {
      spy.mockRestore()
    }
    expect(unref).toHaveBeenCalledTimes(1)
  })
})

describe('anything else the loop holds is cut, as process.exit always did', () => {
  it.each([
    [['Timeout']],
    [['Immediate']],
    [['PipeWrap', 'TCPSocketWrap']],
    [['ProcessWrap', 'PipeWrap']],
    [['FSReqCallback', 'TCPServerWrap']],
  ])('still holding %j a turn later: process.exit with the code, and the promise never settles', async (resources) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] })
    const p = proc(resources)
    let settled = false
    void exitProcess(7, p).then(() => (settled = true))
    await turn()
    expect(p.exitCode).toBe(7)
    expect(p.exits).toEqual([7])
    expect(settled).toBe(false)
  })
})
