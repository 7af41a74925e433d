import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { JobRecord } from '../../../src/jobs/types.js'
import {
  answeredKey,
  awaitsInput,
  declaresTasks,
  elicitAnswer,
  inputKey,
  inputResponsesProblem,
  isExpired,
  jobOfTaskId,
  mintTaskId,
  POLL_INTERVAL_MS,
  principalKey,
  stoppedAtCheckpoint,
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

describe('a job stopped at a person’s checkpoint: a task waiting for input', () => {
  const NEXT = 'job_0123456789abcdef0124'
  const checkpoint = {
    code: 'E_HUMAN_REQUIRED',
    message: 'Open https://example.test/device and enter the code AB12',
    details: { action: 'open_url', resume: 'tasks login resume --id cp_1', checkpoint_id: 'cp_1' },
    retryable: false,
  }
  const stopped = (fields: Partial<JobRecord> = {}) =>
    jobRecord({ job_id: JOB, command: 'login', status: 'failed', error: checkpoint, ...fields })

  it('only a checkpoint (its id and resume) waits; a held change, another error or another state does not', () => {
    expect(stoppedAtCheckpoint(stopped())).toBe(true)
    expect(awaitsInput(stopped())).toBe(true)
    const held = {
      ...checkpoint,
      details: { action: 'approve', resume: 'tasks delete 1 --confirm x', request_id: 'ar_1' },
    }
    const others = [
      stopped({ error: held }),
      stopped({ error: { ...checkpoint, details: { checkpoint_id: 'cp_1' } } }),
      stopped({ error: { ...checkpoint, code: 'E_AUTH' } }),
      stopped({ error: null }),
      stopped({ status: 'succeeded' }),
    ]
    for (const r of others) expect(stoppedAtCheckpoint(r), JSON.stringify(r.error)).toBe(false)
    // Answered or its task cancelled: still the record of a checkpoint, no longer waiting.
    expect(awaitsInput(stopped({ answer: { action: 'decline' } }))).toBe(false)
    expect(awaitsInput(stopped({ cancel_requested: true }))).toBe(false)
    expect(awaitsInput(stopped({ error: held }))).toBe(false)
  })

  it('is input_required with the checkpoint’s message until answered', () => {
    expect(taskOf(stopped(), 't')).toMatchObject({ status: 'input_required', statusMessage: checkpoint.message })
  })

  it('answered: accepted is working until its resume is read; declined or dismissed completed; a cancelled task cancelled', () => {
    const accepted = stopped({ answer: { action: 'accept', continuation: NEXT } })
    expect(taskOf(accepted, 't')).toMatchObject({
      status: 'working',
      statusMessage: 'resuming after the person answered',
    })
    expect(taskOf(stopped({ answer: { action: 'decline' } }), 't')).toMatchObject({
      status: 'completed',
      statusMessage: 'the person declined',
    })
    expect(taskOf(stopped({ answer: { action: 'cancel' } }), 't')).toMatchObject({
      status: 'completed',
      statusMessage: 'the person dismissed the request',
    })
    expect(taskOf(stopped({ cancel_requested: true }), 't')).toMatchObject({
      status: 'cancelled',
      statusMessage: 'cancelled on request',
    })
  })

  it('a task of several jobs: created with the first, where the last stands, changed when any last changed', () => {
    const first = stopped({
      submitted_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:05.000Z',
      answer: { action: 'accept', continuation: NEXT },
    })
    const next = jobRecord({
      job_id: NEXT,
      command: 'login:resume',
      status: 'running',
      worker_pid: 1,
      submitted_at: '2026-01-01T00:00:04.000Z',
      updated_at: '2026-01-01T00:00:04.500Z',
    })
    const t = taskOf(next, 't', [first, next])
    expect(t).toMatchObject({ status: 'working', createdAt: first.submitted_at, lastUpdatedAt: first.updated_at })
    const later = { ...next, updated_at: '2026-01-01T00:00:09.000Z' }
    expect(taskOf(later, 't', [first, later]).lastUpdatedAt).toBe(later.updated_at)
  })

  it('each checkpoint’s request has an id of its own, stable, opaque, found under any key of the ring', () => {
    const id = inputKey(key, JOB)
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(inputKey(key, JOB)).toBe(id)
    expect(inputKey(key, NEXT)).not.toBe(id)
    expect(id).not.toContain(JOB.slice(4))
    const old = taskKey(randomBytes(32))
    expect(answeredKey([key, old], JOB, { [inputKey(old, JOB)]: {} })).toBe(inputKey(old, JOB))
    expect(answeredKey([key], JOB, { [id]: {}, other: {} })).toBe(id)
    // Another checkpoint's id, or one under a key not in the ring, answers nothing.
    expect(answeredKey([key], JOB, { [inputKey(key, NEXT)]: {} })).toBeUndefined()
    expect(answeredKey([key], JOB, { [inputKey(old, JOB)]: {} })).toBeUndefined()
    expect(answeredKey([key], JOB, Object.create({ [id]: {} }))).toBeUndefined()
  })

  it('tasks/update’s responses: required, an object of results; each problem named', () => {
    expect(inputResponsesProblem({})).toBeUndefined()
    expect(inputResponsesProblem({ a: { action: 'accept' } })).toBeUndefined()
    expect(inputResponsesProblem(undefined)).toMatch(/^inputResponses is required: an object keyed by/)
    for (const bad of [null, [], 'x', 5])
      expect(inputResponsesProblem(bad)).toMatch(/^inputResponses must be an object/)
    expect(inputResponsesProblem({ a: {}, b: 5 })).toBe(
      'inputResponses.b must be the result of that request (an object, not a {method, result} envelope)',
    )
    // What the SDK set aside (a `{method, result}` envelope) is named first.
    expect(inputResponsesProblem({ a: {} }, ['c'])).toMatch(/^inputResponses\.c must be/)
  })

  it('an elicitation’s answer: accept, decline or cancel, with an object of content or none', () => {
    expect(elicitAnswer({ action: 'accept' }, 'k')).toEqual({ action: 'accept' })
    expect(elicitAnswer({ action: 'accept', content: { done: true } }, 'k')).toEqual({
      action: 'accept',
      content: { done: true },
    })
    expect(elicitAnswer({ action: 'decline' }, 'k')).toEqual({ action: 'decline' })
    expect(elicitAnswer({ action: 'cancel', extra: 1 }, 'k')).toEqual({ action: 'cancel' })
    expect(elicitAnswer({}, 'k')).toEqual({ problem: 'inputResponses.k.action must be accept, decline or cancel' })
    expect(elicitAnswer({ action: 'ACCEPT' }, 'k')).toHaveProperty('problem')
    expect(elicitAnswer({ action: 'accept', content: 'done' }, 'k')).toEqual({
      problem: 'inputResponses.k.content must be an object',
    })
    expect(elicitAnswer({ action: 'accept', content: ['done'] }, 'k')).toHaveProperty('problem')
  })
})
