import { existsSync, readFileSync } from 'node:fs'

/** Field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot) and the state letter; Linux only. */
function procStat(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may contain spaces; the rest follows its closing parenthesis.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { state: rest[0]!, start: rest[19]! }
  } catch {
    return undefined
  }
}

let proc: boolean | undefined
/** Whether this platform gives process start times (Linux /proc); where it does, every identity is recorded. */
function hasProc(): boolean {
  proc ??= existsSync('/proc/self/stat')
  return proc
}

/** A usable PID: a positive integer (0 and negatives address process groups, never one process). */
function validPid(pid: unknown): pid is number {
  return typeof pid === 'number' && Number.isInteger(pid) && pid > 0
}

/** An identity for a process that survives PID reuse where the platform offers one. */
export function processIdentity(pid: number): string | null {
  return procStat(pid)?.start ?? null
}

/**
 * Whether the process that claimed a job still runs: not gone, not a zombie, and not a reused PID. Where the
 * platform records start times, a claim without one cannot be ours and counts as dead.
 */
export function isAlive(pid: number, identity: string | null): boolean {
  if (!validPid(pid)) return false
  if (hasProc()) {
    const stat = procStat(pid)
    return stat !== undefined && stat.state !== 'Z' && identity !== null && stat.start === identity
  }
  return pidExists(pid)
}

/** Whether any process has this PID now (whoever it is: a PID may be reused). */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Whether `pid` is provably the process recorded with `identity` (PID and start time both match), so a signal
 * sent to it reaches that process and nothing else. Without a recorded start time, never.
 */
export function isSameProcess(pid: number, identity: string | null): boolean {
  if (!validPid(pid) || identity === null || !hasProc()) return false
  const stat = procStat(pid)
  return stat !== undefined && stat.state !== 'Z' && stat.start === identity
}
