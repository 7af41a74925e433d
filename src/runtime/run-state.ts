import type { Catalogue } from '../errors/catalogue.js'
import type { Notice } from '../output/envelope.js'
import type { Globals } from '../universal-flags/globals.js'

/**
 * What the entry knows about this process's run and a command reads: each field has a reader. A command reads it
 * once (`AgentCommand`'s context) and passes what it needs on explicitly.
 */
export type RunState = {
  /** The universal flags, scanned from argv before any parse. */
  globals: Globals
  /** The tool's error catalogue. */
  catalogue: Catalogue
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal
  /** Whether {@link signal} aborted, asked without making it (its controller is made on first use). */
  interrupted?: () => boolean
  /** `meta.notices` of the envelope the entry renders; a command adds to it. */
  notices: Notice[]
  /** The tool's bin name: the default of every next-step hint's first words (`invocation()`). */
  bin: string
  /** The script this run was started as, when not `process.argv[1]` (an in-process run): `invocation()` reads it. */
  script?: string | undefined
  /** The run's stdin as prompts see it, when not `process.stdin`: an in-process run has no terminal to ask on. */
  stdin?: { isTTY?: boolean } | undefined
  /**
   * Ask for at least `ms` to wind down after the first SIGINT/SIGTERM before the process exits anyway (a server
   * that lets its running calls print their own `E_INTERRUPTED`). Never shortens the grace.
   */
  extendInterruptGrace?: (ms: number) => void
  /**
   * How long `withFileLock` waits for a lock someone else holds, unless its caller says: the tool's
   * `agentcli.locks.timeout_ms` (`E_CONFIG` when malformed), read when a lock is taken.
   */
  lockTimeoutMs?: () => number
}

let current: RunState | undefined
let opened = 0

/**
 * Number a run opening in this process (a session). An in-process caller may give up on a run and start another
 * before the first has ended (an MCP client's cancelled read): the late end of the first must then neither write
 * the later run's pending audit record nor put back the process state it found. {@link isLatestRun} tells.
 */
export function openRun(): number {
  opened += 1
  return opened
}

/** Whether no run opened in this process since run `n` ({@link openRun}). */
export function isLatestRun(n: number): boolean {
  return n === opened
}

/** Set by the entry before a command runs; cleared (undefined) when a session opens. */
export function setRunState(state: RunState | undefined): void {
  current = state
}

/** The state of this run, if the entry set one (a command run through oclif's own `execute` has none). */
export function getRunState(): RunState | undefined {
  return current
}
