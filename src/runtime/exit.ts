import { builtin } from '../boot/builtin.js'

const { totalmem } = builtin<typeof import('node:os')>('node:os')

/**
 * How a tool's process ends once its one envelope is out. `process.exit` tears Node's platform down before V8's
 * heap: a background compile job (Sparkplug, Maglev) that is waiting for the main thread to collect garbage then
 * waits for ever, and the main thread waits for it (nodejs/node#54918, #64274; seen here about one `verify` run in
 * ten). Ending the event loop instead takes Node's ordinary teardown, which stops the heap first and releases such
 * a job, at about a millisecond more than `process.exit` (freeing the heap).
 *
 * Such a job waits only when the old generation has reached its allocation limit, which a young, small heap has
 * not: V8's first limit is tens of MB above what a short command uses, and is lowered only by a full collection,
 * which comes from a heap or external memory grown large, or later in a long run. So a run that is young, small
 * and started with V8's own heap sizes on a machine of 2 GiB or more keeps `process.exit`; any other ends by its
 * loop when nothing but the standard streams and requests about to end holds it, and is cut by `process.exit` when
 * something else still does (a socket, a timer, a child a command left), as before.
 */

/** The process as the exit needs it (a test passes its own). */
export type ExitingProcess = {
  exitCode?: number | string | null | undefined
  exit(code: number): never
  getActiveResourcesInfo(): string[]
  uptime(): number
  memoryUsage(): { heapTotal: number; external: number }
  execArgv: string[]
  env: Record<string, string | undefined>
  constrainedMemory?(): number
  /** The machine's memory (a test's stand-in; else `os.totalmem()`). */
  totalMemory?(): number
}

/** A run at or past one of these may have had a full collection: it ends by its loop. */
export const QUICK_EXIT_LIMITS = {
  seconds: 0.5,
  heapBytes: 24 * 2 ** 20,
  externalBytes: 16 * 2 ** 20,
  /** V8 sizes its heap, and its first limit, by the machine's memory (its control group's when lower). */
  memoryBytes: 2 * 2 ** 30,
} as const

/** Node options that size or stress V8's heap (a small one has a small first limit): such a run ends by its loop. */
const HEAP_OPTION = /--(?:max-old-space-size|max-semi-space-size|max-heap-size|initial-old-space-size|stress|gc-)/

/**
 * What the loop may hold and still be about to end: the standard streams (a pipe or terminal that is not read
 * does not keep it alive, but is listed) and requests (a file read or write, a close: done in a moment, and one
 * that failed stays listed until its object is collected). A stream still read (stdin, a channel) or a request
 * that does not end is cut by the backstop.
 */
const ENDS_BY_ITSELF = /^(?:PipeWrap|TTYWrap|WriteWrap|ShutdownWrap)$|Req/

/** How long the loop may take to end on its own before the process is cut anyway. */
export const EXIT_BACKSTOP_MS = 250

/** How the exit waits on the event loop (a test passes its own). */
export type ExitLoop = {
  /** Run `fn` once the loop has turned past a close phase. */
  turn(fn: () => void): void
  /** Run `fn` after `ms` unless the process has ended; never holds the loop itself. */
  backstop(fn: () => void, ms: number): NodeJS.Timeout | undefined
}

/** Two immediates: past a close phase, without the millisecond a timer waits. */
export const EXIT_LOOP: ExitLoop = {
  turn: (fn) => setImmediate(() => setImmediate(fn)),
  backstop: (fn, ms) => setTimeout(fn, ms).unref(),
}

/**
 * End the process with `code`: cut now, or set the code and resolve with it, so that the bin's top-level `await`
 * settles (a pending one would end the process with Node's code 13) and the loop ends. The loop first turns once:
 * a handle closed just before (the child a call waited for, a socket) is listed until its close completes there.
 */
export function exitProcess(code: number, proc: ExitingProcess = process, loop = EXIT_LOOP): Promise<number> {
  proc.exitCode = code
  if (quickExitIsSafe(proc)) return proc.exit(code)
  return new Promise((resolve) => {
    loop.turn(() => {
      if (proc.getActiveResourcesInfo().some((resource) => !ENDS_BY_ITSELF.test(resource))) return proc.exit(code)
      loop.backstop(() => proc.exit(code), EXIT_BACKSTOP_MS)
      resolve(code)
    })
  })
}

/**
 * Whether no background job of V8 can be waiting for a collection: a young, small heap of V8's own sizes, on a
 * machine (or in a control group) large enough that those sizes start well above it.
 */
export function quickExitIsSafe(proc: ExitingProcess): boolean {
  if (proc.uptime() >= QUICK_EXIT_LIMITS.seconds) return false
  if (proc.execArgv.some((arg) => HEAP_OPTION.test(arg)) || HEAP_OPTION.test(proc.env.NODE_OPTIONS ?? '')) return false
  const limit = proc.constrainedMemory?.() ?? 0
  if (
    Math.min(proc.totalMemory?.() ?? totalmem(), limit > 0 ? limit : Number.POSITIVE_INFINITY) <
    QUICK_EXIT_LIMITS.memoryBytes
  )
    return false
  const memory = proc.memoryUsage()
  return memory.heapTotal < QUICK_EXIT_LIMITS.heapBytes && memory.external < QUICK_EXIT_LIMITS.externalBytes
}
