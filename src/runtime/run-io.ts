import { getRunState } from './run-state.js'

// What a run's code outside a command reads of its process (the script, stdin): an in-process run has its own.

/** The script this run was started as: an in-process run's own, else the process's (`process.argv[1]`). */
export function runScript(): string | undefined {
  return getRunState()?.script ?? process.argv[1]
}

/** The run's stdin as prompts see it: an in-process run has none that is a terminal. */
export function runStdin(): { isTTY?: boolean } {
  return getRunState()?.stdin ?? process.stdin
}
