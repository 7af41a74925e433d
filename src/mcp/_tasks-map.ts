import { createHmac, timingSafeEqual } from 'node:crypto'
import type { JobRecord } from '../jobs/types.js'

/*
 * The pure half of the tasks extension (io.modelcontextprotocol/tasks, SEP-2663): task ids bound to a job and a
 * principal, and a job's record as the extension's Task. No I/O here: src/mcp/tasks.ts reads the store.
 */

/** The extension's identifier, as clients declare it and the server advertises it. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

/** How long a task id answers after its job was submitted (the `ttlMs` every task states). */
export const TASK_TTL_MS = 24 * 60 * 60 * 1000

/** The polling interval every task suggests: a job's record changes at most every 200 ms while it reports progress. */
export const POLL_INTERVAL_MS = 1000

/** A task's status (SEP-2663). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled'

/** The fields every task carries. */
export type TaskFields = {
  taskId: string
  status: TaskStatus
  statusMessage?: string
  createdAt: string
  lastUpdatedAt: string
  ttlMs: number | null
  pollIntervalMs?: number
}

const ID = /^(job_[a-z0-9]{20})\.([A-Za-z0-9_-]{43})$/

/** The label the task-id key is derived under, so it never equals a key the confirm tokens are signed with. */
const PURPOSE = 'agentcli/mcp-task-id/v1'

/** The key task ids are MACed with, derived from one key of the tool's confirm key ring. */
export function taskKey(secret: Buffer): Buffer {
  return createHmac('sha256', secret).update(PURPOSE).digest()
}

/**
 * Who a task belongs to, as one string: the authenticated subject (issuer and subject) over HTTP, else the local
 * user the server runs as (stdio, or a loopback listener without authentication: whoever reaches it is local).
 */
export function principalKey(principal: { subject: string; issuer: string } | undefined, uid: number): string {
  return principal ? `sub:${JSON.stringify([principal.issuer, principal.subject])}` : `local:${uid}`
}

function mac(key: Buffer, jobId: string, principal: string): Buffer {
  return createHmac('sha256', key).update(`${jobId}\0${principal}`).digest()
}

/**
 * The task id of a job for a principal: `<job_id>.<MAC>`, the MAC (256 bits, keyed by the tool's secret) over
 * the job id and the principal. Nobody without the secret can make one, and one principal's id is worth nothing
 * to another: the id is a bearer token bound to its holder, and no table of ids needs to be kept anywhere.
 */
export function mintTaskId(key: Buffer, jobId: string, principal: string): string {
  return `${jobId}.${mac(key, jobId, principal).toString('base64url')}`
}

/**
 * The job a task id names, when one of `keys` made it for this principal; undefined for anything else (malformed,
 * forged, another principal's), which the caller answers exactly as an unknown id.
 */
export function jobOfTaskId(keys: readonly Buffer[], taskId: unknown, principal: string): string | undefined {
  if (typeof taskId !== 'string') return undefined
  const m = ID.exec(taskId)
  if (!m) return undefined
  const got = Buffer.from(m[2]!, 'base64url')
  let ok = false
  // Every key is tried (no early exit) so the time taken does not say which one matched.
  for (const key of keys) if (timingSafeEqual(mac(key, m[1]!, principal), got)) ok = true
  return ok ? m[1] : undefined
}

/** Whether a request's client capabilities declare the tasks extension. */
export function declaresTasks(caps: unknown): boolean {
  const extensions = (caps as { extensions?: unknown } | undefined)?.extensions
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions
}

/** Whether a job submitted at `submittedAt` is past its task's TTL at `now`. */
export function isExpired(record: Pick<JobRecord, 'submitted_at'>, now: number): boolean {
  return Date.parse(record.submitted_at) + TASK_TTL_MS <= now
}

/**
 * A job's record as a task: pending and running are `working` (with the job's progress note), succeeded and
 * failed are `completed` (the job's answer is a tool result either way: an error envelope is `isError`, never a
 * `failed` task), cancelled is `cancelled`.
 */
export function taskOf(record: JobRecord, taskId: string): TaskFields {
  const status: TaskStatus =
    record.status === 'cancelled'
      ? 'cancelled'
      : record.status === 'succeeded' || record.status === 'failed'
        ? 'completed'
        : 'working'
  const message = statusMessage(record)
  return {
    taskId,
    status,
    ...(message ? { statusMessage: message } : {}),
    createdAt: record.submitted_at,
    lastUpdatedAt: record.updated_at,
    ttlMs: TASK_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  }
}

function statusMessage(record: JobRecord): string | undefined {
  if (record.status === 'failed') return record.error ? `${record.error.code}: ${record.error.message}` : undefined
  if (record.status === 'pending') return 'queued'
  if (record.status === 'cancelled') return record.cancel_requested ? 'cancelled on request' : 'cancelled'
  const percent = record.progress === null ? '' : `${Math.round(record.progress * 100)}%`
  return [percent, record.message ?? ''].filter(Boolean).join(' ') || undefined
}

/** The job a tool call submitted, when its envelope is a submission (`{job_id, status: pending, poll, result}`). */
export function submittedJob(envelope: Record<string, unknown>): string | undefined {
  const data = envelope.data as { job_id?: unknown; status?: unknown; poll?: unknown } | undefined
  if (envelope.ok !== true || typeof data?.job_id !== 'string' || data.status !== 'pending') return undefined
  return typeof data.poll === 'string' && /^job_[a-z0-9]{20}$/.test(data.job_id) ? data.job_id : undefined
}
