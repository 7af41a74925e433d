/** The jobs barrel (internal: not an entry point of the package): async jobs (spec 002 §15.2). */

export { serveJobs } from '../fleet/serve.js'
export { fileJobStore, newJobId } from './file-store.js'
export { isAlive, isSameProcess, processIdentity } from './liveness.js'
export {
  cancelJob,
  type JobContext,
  reconcile,
  resolveJobStore,
  runJob,
  type SubmittedJob,
  submitJob,
  type Worker,
} from './runtime.js'
export { awaitSubmitted, type SettledResult, settledResult } from './settle.js'
export {
  canMove,
  isFinished,
  JOB_STATUSES,
  type JobPlan,
  type JobRecord,
  type JobStatus,
  type JobStore,
} from './types.js'
export { type WaitOptions, waitForJob } from './wait.js'
