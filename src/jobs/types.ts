import type { ErrorBody } from '../output/envelope.js'

/** Job states (spec 002 §15.2). */
export const JOB_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const
/** One of {@link JOB_STATUSES}. */
export type JobStatus = (typeof JOB_STATUSES)[number]

/** A job as the store keeps it. */
export type JobRecord = {
  job_id: string
  command: string
  argv: string[]
  schema_version: string
  status: JobStatus
  progress: number | null
  eta_seconds: number | null
  message: string | null
  submitted_at: string
  started_at: string | null
  finished_at: string | null
  updated_at: string
  worker_pid: number | null
  worker_start: string | null
  cancel_requested: boolean
  error: ErrorBody | null
  result_kind: 'data' | 'items' | null
  /** On a fleet's store: which worker claimed the job (`host:pid:time`). */
  worker_host?: string | null
  /** On a fleet's store: the claim lasts until then unless its worker renews it; past it the worker is dead. */
  lease_until?: string | null
  /**
   * The remote subject (`tool mcp --http`, JSON `{"iss","sub"}`) that submitted it: only that subject reads,
   * cancels or gets the result of the job. Absent for a job submitted without one (the CLI, MCP over stdio).
   */
  owner?: string
  /** A write job's confirmed plan (token id, targets and versions); the worker applies nothing else. */
  plan?: { token_id: string; targets: Array<{ id: string; version: string | number | null }>; policy?: string }
}

/** Where jobs live. The embedded file store is the default; a fleet can put jobs on a queue or workflow engine. */
export type JobStore = {
  create(record: JobRecord): Promise<void>
  get(id: string): Promise<JobRecord | undefined>
  /** Change a record under the store's lock; `change` returns the new record, or undefined to leave it. */
  update(id: string, change: (record: JobRecord) => JobRecord | undefined): Promise<JobRecord>
  list(): Promise<JobRecord[]>
  writeResult(id: string, data: unknown): Promise<void>
  readResult(id: string): Promise<unknown>
  appendItems(id: string, items: unknown[]): Promise<void>
  readItems(id: string): AsyncIterable<unknown>
}

const NEXT: Record<JobStatus, readonly JobStatus[]> = {
  pending: ['running', 'failed', 'cancelled'],
  running: ['succeeded', 'failed', 'cancelled'],
  succeeded: [],
  failed: [],
  cancelled: [],
}

/** Whether a job may move from one state to another; finished jobs never move again. */
export function canMove(from: JobStatus, to: JobStatus): boolean {
  return NEXT[from].includes(to)
}

/** True for succeeded, failed and cancelled. */
export function isFinished(status: JobStatus): boolean {
  return NEXT[status].length === 0
}
