/**
 * A child this tool starts and must never let outlive it (an MCP call, a verify target, npm during an update) is
 * spawned as the leader of a process group of its own (`detached: OWN_GROUP`), so one signal to the group reaches
 * whatever the child started too. Windows has no process groups: the child alone is signalled there.
 */
export const OWN_GROUP = process.platform !== 'win32'

/** Send `signal` to `child`'s process group (to the child alone on Windows); a group already gone is no error. */
export function signalGroup(
  child: { pid?: number | undefined; kill(signal: NodeJS.Signals): boolean },
  signal: NodeJS.Signals,
): void {
  if (child.pid === undefined) return
  try {
    if (OWN_GROUP) process.kill(-child.pid, signal)
    else child.kill(signal)
  } catch {
    // ESRCH: the group is gone already.
  }
}
