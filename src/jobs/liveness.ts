import { readFileSync } from 'node:fs'

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

/** An identity for a process that survives PID reuse where the platform offers one. */
export function processIdentity(pid: number): string | null {
  return procStat(pid)?.start ?? null
}

/** Whether the process that claimed a job still runs: not gone, not a zombie, and not a reused PID. */
export function isAlive(pid: number, identity: string | null): boolean {
  const stat = procStat(pid)
  if (stat) return stat.state !== 'Z' && (identity === null || stat.start === identity)
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
