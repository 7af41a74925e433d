import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * What ended an in-process run from outside its promise: its code called `process.exit`, or something it started
 * (a timer, a promise nobody awaited) threw with nothing to catch it. Either would end a process of its own; in the
 * server's process it ends only that run.
 */
export type RunFault = { exit: number } | { error: unknown }

/** The fault handler of the in-process run whose code is running: every callback the run schedules carries it. */
const runs = new AsyncLocalStorage<(fault: RunFault) => void>()
let installed = false

/** What a run's `process.exit` throws, so that none of its code after the call runs (as none would in a process). */
class ExitCalled extends Error {
  constructor(code: number) {
    super(`process.exit(${code}) called in the server's process`)
  }
}

/**
 * Start `start` as an in-process run whose faults go to `onFault`, from its first line to its last callback, even
 * one that fires after its call was answered. The process's exit and its uncaught-error listeners are taken over on
 * first use: whatever is not a run's (the server's own) reaches them exactly as before.
 */
export function guardedRun<T>(onFault: (fault: RunFault) => void, start: () => T): T {
  if (!installed) install()
  return runs.run(onFault, start)
}

function install(): void {
  installed = true
  const exit = process.exit
  process.exit = ((code?: number | string | null) => {
    const fault = runs.getStore()
    if (!fault) return exit.call(process, code)
    const n = Number(code ?? process.exitCode ?? 0)
    fault({ exit: Number.isInteger(n) ? n : 1 })
    throw new ExitCalled(n)
  }) as typeof process.exit
  for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
    const others = process.listeners(event as 'uncaughtException') as ((...args: unknown[]) => void)[]
    process.removeAllListeners(event)
    process.on(event as 'uncaughtException', (error: unknown, origin: unknown) => {
      const fault = runs.getStore()
      if (fault) return fault({ error })
      // Not a run's: the server's own listeners, or Node's default (a crash) when it has none.
      if (others.length === 0) throw error
      for (const listener of others) listener.call(process, error, origin)
    })
  }
}
