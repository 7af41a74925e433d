import { getRunState } from './run-state.js'

// What a run's code outside a command reads of its run (the script, stdin, the lock wait): an in-process run has
// its own.

/** The script this run was started as: an in-process run's own, else the process's (`process.argv[1]`). */
export function runScript(): string | undefined {
  return getRunState()?.script ?? process.argv[1]
}

/** The run's stdin as prompts see it: an in-process run has none that is a terminal. */
export function runStdin(): { isTTY?: boolean } {
  return getRunState()?.stdin ?? process.stdin
}

/** How long a lock someone else holds is waited for in this run, when the run set it (the tool's setting). */
export function runLockTimeoutMs(): number | undefined {
  return getRunState()?.lockTimeoutMs?.()
}
