import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { JOB_RECORD, JOBS_DIR, namesIn } from './file-store.js'
import { isSameProcess } from './liveness.js'

/** How long the workers get to end on SIGTERM before SIGKILL, and how often that is looked at. */
const GRACE_MS = 2_000
const STEP_MS = 25
/** How long a pending job's worker may take to claim it; past that its spawn is taken to have failed. */
const CLAIM_MS = 10_000

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** What the records under `dataHome` say of their jobs' background work. */
export type Work = { live: number[]; awaited: number; claiming: number }

/**
 * The job records under `dataHome` (an XDG data dir: `<dataHome>/<tool>/jobs/<id>/job.json`): the workers still
 * running (`worker_pid` provably that process still, PID and start time, so a reused PID is never named; where the
 * platform has no start times, none is), and how many jobs still await work: running with such a worker, or pending
 * with its worker on the way (submitted within {@link CLAIM_MS}; these also count as `claiming`).
 */
export function backgroundWork(dataHome: string, now = Date.now()): Work {
  const work: Work = { live: [], awaited: 0, claiming: 0 }
  for (const tool of namesIn(dataHome))
    for (const id of namesIn(join(dataHome, tool, JOBS_DIR))) {
      let record: { status?: unknown; worker_pid?: unknown; worker_start?: unknown; submitted_at?: unknown }
      try {
        record = JSON.parse(readFileSync(join(dataHome, tool, JOBS_DIR, id, JOB_RECORD), 'utf8'))
      } catch {
        continue
      }
      const { status, worker_pid: pid, worker_start: start, submitted_at: submitted } = record
      const live = typeof pid === 'number' && typeof start === 'string' && isSameProcess(pid, start)
      if (live) work.live.push(pid)
      const claiming = status === 'pending' && typeof submitted === 'string' && now - Date.parse(submitted) < CLAIM_MS
      if ((status === 'running' && live) || claiming) work.awaited++
      if (claiming) work.claiming++
    }
  return work
}

/** The job workers still running whose records are under `dataHome` (see {@link backgroundWork}). */
export function liveWorkers(dataHome: string): number[] {
  return backgroundWork(dataHome).live
}

/**
 * End the job workers of a throw-away home before it is removed (verify's sandbox, a test's): they run detached, so
 * ending the call that started them does not reach them, and one left running writes into the home as it goes (or
 * recreates it after). A worker still on its way to claim its job (the submit answered before it started) is given
 * the grace to claim it first: unseen, it would start after the removal and write there. Then SIGTERM, and SIGKILL
 * after the grace. Returns the PIDs signalled.
 */
export function endWorkers(dataHome: string, graceMs = GRACE_MS): number[] {
  for (let waited = 0; waited < graceMs && backgroundWork(dataHome).claiming > 0; waited += STEP_MS) sleep(STEP_MS)
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

/**
 * Let the background work under a throw-away home settle before its state is compared (verify's side-effect
 * brackets): a job an earlier call started writes its record and result whenever its worker runs, and a snapshot
 * taken meanwhile would blame those writes on the next call. Waits up to `waitMs` for every job to be finished (or
 * pending past {@link CLAIM_MS}) and every worker to have exited: a worker still writes after its job's record says
 * it finished (the call's audit line, as the process ends). Then ends the workers still running (their last writes
 * land before it returns). Returns the PIDs it had to end.
 */
export async function settleWorkers(dataHome: string, waitMs = 5_000): Promise<number[]> {
  const unsettled = () => {
    const work = backgroundWork(dataHome)
    return work.awaited > 0 || work.live.length > 0
  }
  for (let waited = 0; waited < waitMs && unsettled(); waited += STEP_MS)
    await new Promise((resolve) => setTimeout(resolve, STEP_MS))
  return unsettled() ? endWorkers(dataHome) : []
}
