/**
 * How a tool's process ends once its one envelope is out. `process.exit` tears Node's platform down before V8's
 * heap: a background compile job (Sparkplug, Maglev) that is waiting for the main thread to collect garbage then
 * waits for ever, and the main thread waits for it (nodejs/node#54918, #64274; seen here about one `verify` run in
 * ten). Ending the event loop instead takes Node's ordinary teardown, which stops the heap first and releases such
 * a job. So a run whose loop holds nothing but the standard streams and requests about to end ends by its loop;
 * anything else still held (a socket, a timer, a child a command left) is cut as before, by `process.exit`.
 */

/** The process as the exit needs it (a test passes its own). */
export type ExitingProcess = {
  exitCode?: number | string | null | undefined
  exit(code: number): never
  getActiveResourcesInfo(): string[]
}

/**
 * What the loop may hold and still be about to end: the standard streams (a pipe or terminal that is not read
 * does not keep it alive, but is listed) and requests (a file read or write, a close: done in a moment, and one
 * that failed stays listed until its object is collected). A stream still read (stdin, a channel) or a request
 * that does not end is cut by the backstop.
 */
const ENDS_BY_ITSELF = /^(?:PipeWrap|TTYWrap|WriteWrap|ShutdownWrap)$|Req/

/** How long the loop may take to end on its own before the process is cut anyway. */
export const EXIT_BACKSTOP_MS = 250

/**
 * End the process with `code`: cut now, or set the code and resolve with it, so that the bin's top-level `await`
 * settles (a pending one would end the process with Node's code 13) and the loop ends. The loop first turns once
 * (two immediates: past a close phase, without the millisecond a timer waits): a handle closed just before (the
 * child a call waited for, a socket) is listed until its close completes there.
 */
export function exitProcess(code: number, proc: ExitingProcess = process): Promise<number> {
  proc.exitCode = code
  return new Promise((resolve) => {
    setImmediate(() =>
      setImmediate(() => {
        if (proc.getActiveResourcesInfo().some((resource) => !ENDS_BY_ITSELF.test(resource))) return proc.exit(code)
        setTimeout(() => proc.exit(code), EXIT_BACKSTOP_MS).unref()
        resolve(code)
      }),
    )
  })
}
