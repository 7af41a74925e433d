import { describe, expect, it } from 'vitest'
import {
  EXIT_BACKSTOP_MS,
  EXIT_LOOP,
  type ExitingProcess,
  type ExitLoop,
  exitProcess,
  QUICK_EXIT_LIMITS,
  quickExitIsSafe,
} from '../../../src/runtime/exit.js'

const MB = 2 ** 20

/**
 * A process whose loop holds `resources`, by default past the quick exit (a second old); `exit` records its code
 * (and returns, as no real exit would).
 */
function proc(resources: string[], over: Partial<ExitingProcess> = {}): ExitingProcess & { exits: number[] } {
  const exits: number[] = []
  return {
    exits,
    exitCode: undefined,
    exit: ((code: number) => {
      exits.push(code)
    }) as never,
    getActiveResourcesInfo: () => resources,
    uptime: () => 1,
    memoryUsage: () => ({ heapTotal: 8 * MB, external: 1 * MB }),
    execArgv: [],
    env: {},
    totalMemory: () => 16 * 2 ** 30,
    ...over,
  }
}

/** A loop the test turns by hand: what waits for the turn, and the backstops asked for. */
function manualLoop(): ExitLoop & { turns: Array<() => void>; backstops: Array<[() => void, number]> } {
  const turns: Array<() => void> = []
  const backstops: Array<[() => void, number]> = []
  return {
    turns,
    backstops,
    turn: (fn) => void turns.push(fn),
    backstop: (fn, ms) => {
      backstops.push([fn, ms])
      return undefined
    },
  }
}

describe('a young, small run of V8’s own heap sizes keeps process.exit (no background job can be waiting)', () => {
  const young: Partial<ExitingProcess> = { uptime: () => 0.03 }

  it('a 30 ms run with an 8 MB heap: process.exit at once, whatever holds the loop', () => {
    const p = proc(['PipeWrap'], young)
    const loop = manualLoop()
    void exitProcess(0, p, loop)
    expect(p.exits).toEqual([0])
    expect(loop.turns).toEqual([])
    expect(quickExitIsSafe(p)).toBe(true)
    // No control group, or one that leaves no limit (Node reports 2^64 then): the machine's memory decides.
    expect(quickExitIsSafe({ ...p, constrainedMemory: () => 0 })).toBe(true)
    expect(quickExitIsSafe({ ...p, constrainedMemory: () => 2 ** 64 })).toBe(true)
  })

  it('a machine of 1 GiB: V8 sizes its heap small, the run ends by its loop', () => {
    expect(quickExitIsSafe(proc([], { ...young, totalMemory: () => 2 ** 30 }))).toBe(false)
  })

  it.each([
    ['old', { uptime: (): number => QUICK_EXIT_LIMITS.seconds }],
    ['a large heap', { ...young, memoryUsage: () => ({ heapTotal: QUICK_EXIT_LIMITS.heapBytes, external: 0 }) }],
    [
      'much external memory',
      { ...young, memoryUsage: () => ({ heapTotal: 8 * MB, external: QUICK_EXIT_LIMITS.externalBytes }) },
    ],
    ['a heap size flag', { ...young, execArgv: ['--max-old-space-size=64'] }],
    ['a stress flag', { ...young, execArgv: ['--stress-concurrent-allocation'] }],
    ['a heap size in NODE_OPTIONS', { ...young, env: { NODE_OPTIONS: '--require x --max-semi-space-size=1' } }],
    ['a control group of 1 GiB', { ...young, constrainedMemory: () => 2 ** 30 }],
  ] as const)('%s: not quick, it ends by its loop', async (_, over) => {
    const p = proc([], over as Partial<ExitingProcess>)
    expect(quickExitIsSafe(p)).toBe(false)
    const loop = manualLoop()
    const ended = exitProcess(0, p, loop)
    expect(p.exits).toEqual([])
    loop.turns[0]!()
    await expect(ended).resolves.toBe(0)
    expect(p.exits).toEqual([])
  })
})

describe('a process ends by its loop when nothing but the standard streams and requests holds it', () => {
  it.each([
    [[]],
    [['PipeWrap']],
    [['TTYWrap', 'PipeWrap', 'PipeWrap']],
    [['FSReqPromise', 'CloseReq', 'FSReqCallback', 'WriteWrap']],
  ])('holding %j: the code is set at once; a turn later it resolves with it, a backstop armed', async (resources) => {
    const p = proc(resources)
    const loop = manualLoop()
    let resolved: number | undefined
    void exitProcess(3, p, loop).then((code) => (resolved = code))
    expect(p.exitCode).toBe(3)
    expect(loop.turns).toHaveLength(1)
    loop.turns[0]!()
    await Promise.resolve()
    expect(resolved).toBe(3)
    expect(p.exits).toEqual([])
    // A stream still read (stdin, a channel) holds the loop past the backstop: the process is cut then.
    expect(loop.backstops.map(([, ms]) => ms)).toEqual([EXIT_BACKSTOP_MS])
    loop.backstops[0]![0]()
    expect(p.exits).toEqual([3])
  })

  it('a handle that finishes closing in the turn the exit waits (a child just reaped) does not cut it', async () => {
    let closing = true
    const p = proc([], { getActiveResourcesInfo: () => (closing ? ['ProcessWrap', 'PipeWrap'] : ['PipeWrap']) })
    const loop = { ...EXIT_LOOP, backstop: () => undefined }
    let resolved: number | undefined
    void exitProcess(0, p, loop).then((code) => (resolved = code))
    // Its close callback: in this turn of the loop, after the exit's first immediate.
    setImmediate(() => {
      closing = false
    })
    // Three turns: past the exit's check, whichever way it went.
    await new Promise((done) => setImmediate(() => setImmediate(() => setImmediate(done))))
    expect(p.exits).toEqual([])
    expect(resolved).toBe(0)
  })

  it('the backstop never holds the loop itself (it is unref’d)', () => {
    const count = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const before = count()
    const timer = EXIT_LOOP.backstop(() => undefined, 60_000)
    try {
      expect(count()).toBe(before)
      expect(timer?.hasRef()).toBe(false)
    } finally {
      clearTimeout(timer)
    }
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
    const p = proc(resources)
    const loop = manualLoop()
    let settled = false
    void exitProcess(7, p, loop).then(() => (settled = true))
    loop.turns[0]!()
    await Promise.resolve()
    expect(p.exitCode).toBe(7)
    expect(p.exits).toEqual([7])
    expect(settled).toBe(false)
    expect(loop.backstops).toEqual([])
  })
})
