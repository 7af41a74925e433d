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
 * Whether a job stopped at a person's checkpoint (`E_HUMAN_REQUIRED` with the command that resumes it and the
 * checkpoint's id; a change the policy holds has neither id nor job: it is asked before any task exists).
 */
export function stoppedAtCheckpoint(record: JobRecord): boolean {
  const details = record.error?.details
  return (
    record.status === 'failed' &&
    record.error?.code === 'E_HUMAN_REQUIRED' &&
    typeof details?.resume === 'string' &&
    typeof details.checkpoint_id === 'string'
  )
}

/** Whether a job's checkpoint still waits for the person: not answered, and its task not cancelled. */
export function awaitsInput(record: JobRecord): boolean {
  return stoppedAtCheckpoint(record) && record.answer === undefined && !record.cancel_requested
}

/**
 * A task as its records tell it: `chain` is the job the task was created for, then each job that resumed a
 * checkpoint of the one before; `record`, the last, says where the task stands. Pending and running are `working`
 * (with the job's progress note); succeeded and failed are `completed` (the job's answer is a tool result either
 * way: an error envelope is `isError`, never a `failed` task); cancelled is `cancelled`. A job stopped at a
 * person's checkpoint is `input_required` until the person answers: accepted, the job that resumes it is the task
 * (`working` until that job is read); declined or dismissed, `completed` with the checkpoint's answer; a cancelled
 * task, `cancelled`. The task was created with its first job and last changed with the latest change of any.
 */
export function taskOf(record: JobRecord, taskId: string, chain: readonly JobRecord[] = [record]): TaskFields {
  const status = statusOf(record)
  const message = statusMessage(record, status)
  const updated = chain.reduce(
    (at, r) => (Date.parse(r.updated_at) > Date.parse(at) ? r.updated_at : at),
    record.updated_at,
  )
  return {
    taskId,
    status,
    ...(message ? { statusMessage: message } : {}),
    createdAt: chain[0]!.submitted_at,
    lastUpdatedAt: updated,
    ttlMs: TASK_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  }
}

function statusOf(record: JobRecord): TaskStatus {
  if (record.status === 'cancelled') return 'cancelled'
  if (record.status === 'pending' || record.status === 'running') return 'working'
  if (!stoppedAtCheckpoint(record)) return 'completed'
  if (record.cancel_requested) return 'cancelled'
  if (!record.answer) return 'input_required'
  return record.answer.action === 'accept' ? 'working' : 'completed'
}

function statusMessage(record: JobRecord, status: TaskStatus): string | undefined {
  if (status === 'input_required') return record.error!.message
  if (status === 'cancelled') return record.cancel_requested ? 'cancelled on request' : 'cancelled'
  if (record.answer) return ANSWERED[record.answer.action]
  if (record.status === 'failed') return record.error ? `${record.error.code}: ${record.error.message}` : undefined
  if (record.status === 'pending') return 'queued'
  const percent = record.progress === null ? '' : `${Math.round(record.progress * 100)}%`
  return [percent, record.message ?? ''].filter(Boolean).join(' ') || undefined
}

const ANSWERED = {
  accept: 'resuming after the person answered',
  decline: 'the person declined',
  cancel: 'the person dismissed the request',
} as const

/** The label input-request ids are derived under (task ids MAC a job id, which never starts with it). */
const INPUT = 'input\0'

/**
 * The id of the input request a job's checkpoint makes of its task: opaque, the same on every read and every
 * server of the tool (a MAC over the job id under the task-id key), and another for each checkpoint of the task
 * (each is a job of its own), so an answer to one never answers the next.
 */
export function inputKey(key: Buffer, jobId: string): string {
  return createHmac('sha256', key).update(`${INPUT}${jobId}`).digest('base64url').slice(0, 22)
}

/** The id, under any of `keys`, that `responses` answers for a job's checkpoint; undefined when none does. */
export function answeredKey(
  keys: readonly Buffer[],
  jobId: string,
  responses: Record<string, unknown>,
): string | undefined {
  return keys.map((key) => inputKey(key, jobId)).find((id) => Object.hasOwn(responses, id))
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * What is wrong with the `inputResponses` of a `tasks/update`: required, an object keyed by request id whose every
 * entry is the bare result of its request (`dropped`: the keys the SDK set aside as not that, a `{method, result}`
 * envelope or no object at all).
 */
export function inputResponsesProblem(responses: unknown, dropped: readonly string[] = []): string | undefined {
  const shape = "an object keyed by the ids of the task's inputRequests"
  if (responses === undefined) return `inputResponses is required: ${shape}`
  if (!isObject(responses)) return `inputResponses must be ${shape}`
  const bad = dropped[0] ?? Object.keys(responses).find((key) => !isObject(responses[key]))
  return bad === undefined
    ? undefined
    : `inputResponses.${bad} must be the result of that request (an object, not a {method, result} envelope)`
}

/** The person's answer to an elicitation: accepted (with what the form held), declined or dismissed. */
export type ElicitAnswer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }

/** An elicitation's result as the client sent it for request `key`, or what is wrong with it. */
export function elicitAnswer(value: Record<string, unknown>, key: string): ElicitAnswer | { problem: string } {
  const { action, content } = value
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel')
    return { problem: `inputResponses.${key}.action must be accept, decline or cancel` }
  if (content !== undefined && !isObject(content)) return { problem: `inputResponses.${key}.content must be an object` }
  return content === undefined ? { action } : { action, content }
}

/** The job a tool call submitted, when its envelope is a submission (`{job_id, status: pending, poll, result}`). */
export function submittedJob(envelope: Record<string, unknown>): string | undefined {
  const data = envelope.data as { job_id?: unknown; status?: unknown; poll?: unknown } | undefined
  if (envelope.ok !== true || typeof data?.job_id !== 'string' || data.status !== 'pending') return undefined
  return typeof data.poll === 'string' && /^job_[a-z0-9]{20}$/.test(data.job_id) ? data.job_id : undefined
}
