import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isSameProcess } from './liveness.js'

/** How long the workers get to end on SIGTERM before SIGKILL, and how often that is looked at. */
const GRACE_MS = 2_000
const STEP_MS = 25

const names = (dir: string): string[] => {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * The job workers still running whose records are under `dataHome` (an XDG data dir): every `job.json` under
 * `<dataHome>/<tool>/jobs/<id>/` whose `worker_pid` is provably that process still (PID and start time, so a reused
 * PID is never named; where the platform has no start times, none is).
 */
export function liveWorkers(dataHome: string): number[] {
  const pids: number[] = []
  for (const tool of names(dataHome))
    for (const id of names(join(dataHome, tool, 'jobs'))) {
      let record: { worker_pid?: unknown; worker_start?: unknown }
      try {
        record = JSON.parse(readFileSync(join(dataHome, tool, 'jobs', id, 'job.json'), 'utf8'))
      } catch {
        continue
      }
      const { worker_pid: pid, worker_start: start } = record
      if (typeof pid === 'number' && typeof start === 'string' && isSameProcess(pid, start)) pids.push(pid)
    }
  return pids
}

/**
 * End the job workers of a throw-away home before it is removed (verify's sandbox, a test's): they run detached, so
 * ending the call that started them does not reach them, and one left running writes into the home as it goes (or
 * recreates it after). SIGTERM, then SIGKILL after a grace. Returns the PIDs signalled.
 */
export function endWorkers(dataHome: string, graceMs = GRACE_MS): number[] {
  const pids = liveWorkers(dataHome)
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name)
    } catch {
      // Gone already.
    }
  }
  for (const pid of pids) signal(pid, 'SIGTERM')
  const alive = () => liveWorkers(dataHome).filter((pid) => pids.includes(pid))
  for (let waited = 0; waited < graceMs && alive().length > 0; waited += STEP_MS) sleep(STEP_MS)
  for (const pid of alive()) signal(pid, 'SIGKILL')
  return pids
}
