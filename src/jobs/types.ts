import type { ErrorBody } from '../output/envelope.js'

/** Job states (spec 002 §15.2). */
export const JOB_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const
/** One of {@link JOB_STATUSES}. */
export type JobStatus = (typeof JOB_STATUSES)[number]

/** A job as the store keeps it. */
export type JobRecord = {
  /** The job's id. */
  job_id: string
  /** The id of the command that submitted it (and whose `work()` runs it). */
  command: string
  /** The arguments of the submitting call, as the worker replays them. */
  argv: string[]
  /** The command's `schemaVersion` at submission. */
  schema_version: string
  /** Where the job stands. */
  status: JobStatus
  /** The last progress reported, in [0, 1], or null. */
  progress: number | null
  /** The last estimate of the seconds left, or null. */
  eta_seconds: number | null
  /** The last note reported with progress, or null. */
  message: string | null
  /** When it was submitted (ISO 8601 UTC). */
  submitted_at: string
  /** When a worker started it, or null. */
  started_at: string | null
  /** When it succeeded, failed or was cancelled, or null. */
  finished_at: string | null
  /** When the record last changed. */
  updated_at: string
  /** The worker's process id, or null before one started. */
  worker_pid: number | null
  /** The worker process's start time, so that a reused pid is not taken for the worker. */
  worker_start: string | null
  /** Whether `job cancel` asked for it to stop. */
  cancel_requested: boolean
  /** The error of a failed job, or null. */
  error: ErrorBody | null
  /** The shape of a succeeded job's result: one value (`data`) or NDJSON items; null before it has one. */
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
  plan?: JobPlan
  /**
   * The record of a whole call of the tool, not of a command's `work()`: a call that stopped at a person's
   * checkpoint (`failed`, `E_HUMAN_REQUIRED`), recorded so an MCP task can wait on it, or a checkpoint's resume,
   * whose worker runs `argv` as the command line and records the envelope it prints (`tool mcp`'s tasks extension).
   */
  call?: true
  /** The job whose checkpoint this call resumes: a person answered it through an MCP task. */
  continues?: string
  /**
   * How a person answered the checkpoint this job stopped at, through an MCP task: accepted (`continuation` is the
   * job that resumes it), declined, or dismissed (`cancel`). Set once: a second answer changes nothing.
   */
  answer?: { action: 'accept'; continuation: string } | { action: 'decline' | 'cancel' }
}

/**
 * What a confirmed async write hands its worker: the token it consumed, the targets and versions it verified, and
 * what the worker needs to judge the change again as the confirm did (the policy's digest; for a change the policy
 * holds, the approval request, recomputed from the principal and the token's expiry recorded here).
 */
export type JobPlan = {
  /** The id of the confirm token the submission consumed. */
  token_id: string
  /** The targets the confirm bound, each with the version it saw: the worker applies to nothing else. */
  targets: Array<{ id: string; version: string | number | null }>
  /** The digest of the policy the confirm was judged by, when there was one: the worker re-checks it. */
  policy?: string
  /**
   * When the confirm token expired (ISO 8601 UTC): the approval request of a held change is bound to it, and its
   * worker applies nothing after it.
   */
  expires_at?: string
  /** The principal the token bound (the requester): a held change's approval request names it. */
  principal?: Record<string, unknown>
}

/** Where jobs live. The embedded file store is the default; a fleet can put jobs on a queue or workflow engine. */
export type JobStore = {
  /** Store a new record. */
  create(record: JobRecord): Promise<void>
  /** A job's record, or undefined when there is none. */
  get(id: string): Promise<JobRecord | undefined>
  /** Change a record under the store's lock; `change` returns the new record, or undefined to leave it. */
  update(id: string, change: (record: JobRecord) => JobRecord | undefined): Promise<JobRecord>
  /** Every job's record. */
  list(): Promise<JobRecord[]>
  /** Store a job's result (one value). */
  writeResult(id: string, data: unknown): Promise<void>
  /** A job's stored result. */
  readResult(id: string): Promise<unknown>
  /** Add items to a job's large result (what `ctx.emit()` writes). */
  appendItems(id: string, items: unknown[]): Promise<void>
  /** A job's items, in the order they were added. */
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
