import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  declaresTasks,
  isExpired,
  jobOfTaskId,
  mintTaskId,
  POLL_INTERVAL_MS,
  principalKey,
  submittedJob,
  TASK_TTL_MS,
  TASKS_EXTENSION,
  taskKey,
  taskOf,
} from '../../../src/mcp/_tasks-map.js'
import { jobRecord } from '../../support/helpers.js'

const JOB = 'job_0123456789abcdef0123'
const key = taskKey(randomBytes(32))
const ann = principalKey({ issuer: 'https://idp.example', subject: 'ann' }, 1000)
const bob = principalKey({ issuer: 'https://idp.example', subject: 'bob' }, 1000)

describe('task ids: bearer tokens bound to a job and a principal', () => {
  it('names its job for the principal it was minted for, and nothing for anyone else', () => {
    const id = mintTaskId(key, JOB, ann)
    expect(id).toMatch(/^job_0123456789abcdef0123\.[A-Za-z0-9_-]{43}$/)
    expect(jobOfTaskId([key], id, ann)).toBe(JOB)
    expect(jobOfTaskId([key], id, bob)).toBeUndefined()
    // The same subject from another issuer, and the local user, are other principals.
    expect(jobOfTaskId([key], id, principalKey({ issuer: 'https://other.example', subject: 'ann' }, 1000))).toBe(
      undefined,
    )
    expect(jobOfTaskId([key], id, principalKey(undefined, 1000))).toBeUndefined()
  })

  it('refuses a forged or altered id, an id under another key, and anything not an id', () => {
    const id = mintTaskId(key, JOB, ann)
    const other = taskKey(randomBytes(32))
    expect(jobOfTaskId([other], id, ann)).toBeUndefined()
    // Another job id with the MAC of the first: the MAC covers the job id.
    expect(jobOfTaskId([key], id.replace(JOB, 'job_0123456789abcdef0124'), ann)).toBeUndefined()
    const mac = id.split('.')[1]!
    const flipped = `${JOB}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`
    expect(jobOfTaskId([key], flipped, ann)).toBeUndefined()
    for (const bad of [JOB, `${JOB}.`, `${id}x`, ` ${id}`, id.toUpperCase(), 42, null, undefined, {}])
      expect(jobOfTaskId([key], bad, ann), String(bad)).toBeUndefined()
  })

  it('keeps verifying with a rotated-out key', () => {
    const old = taskKey(randomBytes(32))
    const id = mintTaskId(old, JOB, ann)
    expect(jobOfTaskId([key, old], id, ann)).toBe(JOB)
    expect(jobOfTaskId([key], id, ann)).toBeUndefined()
  })

  it('the local principal is the user id the server runs as', () => {
    expect(principalKey(undefined, 1000)).toBe('local:1000')
    expect(principalKey(undefined, 1000)).not.toBe(principalKey(undefined, 1001))
    // A subject cannot pose as a local user, whatever it is called.
    expect(principalKey({ issuer: 'local', subject: '1000' }, 1000)).not.toBe('local:1000')
  })
})

describe('a job as a task', () => {
  const base = { job_id: JOB, command: 'sleepy' }

  it('pending and running are working, with the progress note', () => {
    const pending = taskOf(jobRecord({ ...base, status: 'pending' }), 't')
    expect(pending).toMatchObject({ taskId: 't', status: 'working', statusMessage: 'queued' })
    expect(pending.ttlMs).toBe(TASK_TTL_MS)
    expect(pending.pollIntervalMs).toBe(POLL_INTERVAL_MS)
    const running = taskOf(
      jobRecord({ ...base, status: 'running', progress: 0.25, message: 'parsed 5', worker_pid: 1 }),
      't',
    )
    expect(running).toMatchObject({ status: 'working', statusMessage: '25% parsed 5' })
    expect(taskOf(jobRecord({ ...base, status: 'running', progress: null, worker_pid: 1 }), 't').statusMessage).toBe(
      undefined,
    )
  })

  it("succeeded and failed are completed (a job's error is the tool's isError result, never a failed task)", () => {
    expect(taskOf(jobRecord({ ...base, status: 'succeeded' }), 't').status).toBe('completed')
    const failed = taskOf(
      jobRecord({
        ...base,
        status: 'failed',
        error: { code: 'E_SERVER', message: 'upstream said 503', details: {}, retryable: true },
      }),
      't',
    )
    expect(failed).toMatchObject({ status: 'completed', statusMessage: 'E_SERVER: upstream said 503' })
    expect(taskOf(jobRecord({ ...base, status: 'failed', error: null }), 't').statusMessage).toBeUndefined()
  })

  it('cancelled is cancelled; times are the record’s', () => {
    const r = jobRecord({ ...base, status: 'cancelled', cancel_requested: true })
    const t = taskOf(r, 't')
    expect(t).toMatchObject({ status: 'cancelled', statusMessage: 'cancelled on request' })
    expect(t.createdAt).toBe(r.submitted_at)
    expect(t.lastUpdatedAt).toBe(r.updated_at)
    expect(taskOf(jobRecord({ ...base, status: 'cancelled' }), 't').statusMessage).toBe('cancelled')
  })

  it('a task expires its TTL after the job was submitted', () => {
    const at = Date.parse('2026-01-01T00:00:00.000Z')
    const r = { submitted_at: '2026-01-01T00:00:00.000Z' }
    expect(isExpired(r, at + TASK_TTL_MS - 1)).toBe(false)
    expect(isExpired(r, at + TASK_TTL_MS)).toBe(true)
  })
})

describe('which calls become tasks', () => {
  it('only a request that declares the extension', () => {
    expect(declaresTasks({ extensions: { [TASKS_EXTENSION]: {} } })).toBe(true)
    for (const caps of [undefined, null, {}, { extensions: {} }, { extensions: null }, { tasks: {} }])
      expect(declaresTasks(caps), JSON.stringify(caps)).toBe(false)
  })

  it('only an envelope that submitted a job', () => {
    const data = { job_id: JOB, status: 'pending', poll: `x job status --id ${JOB}`, result: 'r' }
    expect(submittedJob({ ok: true, data })).toBe(JOB)
    expect(submittedJob({ ok: false, data })).toBeUndefined()
    expect(submittedJob({ ok: true, data: { ...data, status: 'succeeded' } })).toBeUndefined()
    expect(submittedJob({ ok: true, data: { ...data, poll: undefined } })).toBeUndefined()
    expect(submittedJob({ ok: true, data: { ...data, job_id: '../x' } })).toBeUndefined()
    expect(submittedJob({ ok: true })).toBeUndefined()
  })
})
