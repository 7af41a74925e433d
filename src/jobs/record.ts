import { JOB_STATUSES, type JobRecord } from './types.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isTime = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v))
const isTimeOrNull = (v: unknown) => v === null || isTime(v)
const isStringOrNull = (v: unknown) => v === null || typeof v === 'string'
const isNumberOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v))

const isJobId = (v: unknown) => typeof v === 'string' && /^job_[a-z0-9]{20}$/.test(v)
const isAnswer = (v: unknown) =>
  isObject(v) &&
  (v.action === 'accept'
    ? isJobId(v.continuation) && Object.keys(v).length === 2
    : (v.action === 'decline' || v.action === 'cancel') && Object.keys(v).length === 1)

type Check = [field: keyof JobRecord, ok: (v: unknown, r: Record<string, unknown>) => boolean, expected: string]

const CHECKS: Check[] = [
  ['command', (v) => typeof v === 'string' && v.length > 0, 'a command id'],
  ['argv', (v) => Array.isArray(v) && v.every((a) => typeof a === 'string'), 'an array of strings'],
  ['schema_version', (v) => typeof v === 'string', 'a string'],
  ['status', (v) => (JOB_STATUSES as readonly unknown[]).includes(v), `one of ${JOB_STATUSES.join(', ')}`],
  ['progress', (v) => v === null || (typeof v === 'number' && v >= 0 && v <= 1), 'a number in [0, 1] or null'],
  ['eta_seconds', (v) => isNumberOrNull(v) && (v === null || (v as number) >= 0), 'a number ≥ 0 or null'],
  ['message', isStringOrNull, 'a string or null'],
  ['submitted_at', isTime, 'an ISO 8601 time'],
  ['started_at', isTimeOrNull, 'an ISO 8601 time or null'],
  ['finished_at', isTimeOrNull, 'an ISO 8601 time or null'],
  ['updated_at', isTime, 'an ISO 8601 time'],
  [
    'worker_pid',
    (v, r) => (v === null && r.status !== 'running') || (typeof v === 'number' && Number.isInteger(v) && v > 0),
    'a positive integer (null only while not running)',
  ],
  ['worker_start', isStringOrNull, 'a string or null'],
  ['cancel_requested', (v) => typeof v === 'boolean', 'a boolean'],
  [
    'error',
    (v) =>
      v === null ||
      (isObject(v) &&
        typeof v.code === 'string' &&
        typeof v.message === 'string' &&
        typeof v.retryable === 'boolean' &&
        isObject(v.details)),
    'null or {code, message, details, retryable}',
  ],
  ['result_kind', (v) => v === null || v === 'data' || v === 'items', 'data, items or null'],
  ['owner', (v) => v === undefined || (typeof v === 'string' && v.length > 0), 'a subject, or absent'],
  ['call', (v) => v === undefined || v === true, 'true, or absent'],
  ['continues', (v) => v === undefined || isJobId(v), 'a job id, or absent'],
  [
    'answer',
    (v) => v === undefined || isAnswer(v),
    '{action: accept, continuation: <job id>}, {action: decline|cancel}, or absent',
  ],
]

/**
 * What is wrong with a stored job record, or undefined when it is one: every field of {@link JobRecord} with
 * its type and range, and the id of the directory it was read from. Records are checked on every read, so a
 * corrupt or tampered file is reported, never printed or acted on.
 */
export function jobRecordProblem(value: unknown, id: string): string | undefined {
  if (!isObject(value)) return 'not an object'
  if (value.job_id !== id) return `job_id is ${JSON.stringify(value.job_id)}, expected "${id}"`
  for (const [field, ok, expected] of CHECKS)
    if (!ok(value[field], value))
      return `${field} is ${JSON.stringify(value[field]) ?? 'missing'}, expected ${expected}`
  return undefined
}

/** A job as submitted: pending, not yet claimed by a worker, nothing run. */
export function pendingRecord(
  fields: Pick<JobRecord, 'job_id' | 'command' | 'argv' | 'schema_version'> &
    Pick<Partial<JobRecord>, 'plan' | 'owner'>,
  now = new Date().toISOString(),
): JobRecord {
  return {
    ...fields,
    status: 'pending',
    progress: 0,
    eta_seconds: null,
    message: null,
    submitted_at: now,
    started_at: null,
    finished_at: null,
    updated_at: now,
    worker_pid: null,
    worker_start: null,
    cancel_requested: false,
    error: null,
    result_kind: null,
  }
}
