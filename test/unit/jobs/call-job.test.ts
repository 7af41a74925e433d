import { describe, expect, it } from 'vitest'
import { callOutcome } from '../../../src/jobs/call-job.js'
import { jobRecordProblem, pendingRecord } from '../../../src/jobs/record.js'

const JOB = 'job_0123456789abcdef0123'
const NEXT = 'job_0123456789abcdef0124'
const base = { job_id: JOB, command: 'login:resume', argv: ['login', 'resume', '--id', 'cp_1'], schema_version: '1.0' }

describe('a call job (a checkpoint’s resume run as a whole command line)', () => {
  it('its record: a call, the job it continues, the answer of its checkpoint; anything else is corrupt', () => {
    const record = { ...pendingRecord(base), call: true, continues: NEXT }
    expect(jobRecordProblem(record, JOB)).toBeUndefined()
    for (const answer of [{ action: 'accept', continuation: NEXT }, { action: 'decline' }, { action: 'cancel' }])
      expect(jobRecordProblem({ ...record, answer }, JOB), JSON.stringify(answer)).toBeUndefined()
    const corrupt: Array<[string, unknown]> = [
      ['call', false],
      ['call', 'yes'],
      ['continues', '../job'],
      ['continues', 42],
      ['answer', { action: 'accept' }],
      ['answer', { action: 'accept', continuation: NEXT, extra: 1 }],
      ['answer', { action: 'decline', continuation: NEXT }],
      ['answer', { action: 'maybe' }],
      ['answer', 'accept'],
    ]
    for (const [field, value] of corrupt)
      expect(jobRecordProblem({ ...record, [field]: value }, JOB), `${field} ${JSON.stringify(value)}`).toMatch(
        new RegExp(`^${field} is`),
      )
  })

  it('what the call printed is the job’s answer: the data of a success, the error of a failure', () => {
    expect(callOutcome('{"ok":true,"data":{"account":"ann"}}\n', 0)).toEqual({ account: 'ann' })
    expect(callOutcome('{"ok":true}', 0)).toBeNull()
    // NDJSON: the last line is the envelope.
    expect(callOutcome('{"type":"item"}\n{"ok":true,"data":1}\n', 0)).toBe(1)
    const failure = () =>
      callOutcome(
        JSON.stringify({
          ok: false,
          error: { code: 'E_HUMAN_REQUIRED', message: 'not yet', details: { resume: 'x' }, retryable: false },
        }),
        9,
      )
    expect(failure).toThrow(expect.objectContaining({ code: 'E_HUMAN_REQUIRED', message: 'not yet' }))
    expect(failure).toThrow(expect.objectContaining({ details: { resume: 'x' } }))
    expect(() => callOutcome('{"ok":false,"error":{"code":"E_AUTH","message":"no"}}', 4)).toThrow(
      expect.objectContaining({ code: 'E_AUTH', details: {} }),
    )
  })

  it('anything else (no envelope, a malformed error, cut short) is E_INTERNAL with the exit code', () => {
    for (const [out, code] of [
      ['', 1],
      ['not json', 0],
      ['{"ok":false,"error":{"message":"no code"}}', 1],
      ['{"data":1}', 0],
      ['{"ok":true', null],
    ] as const)
      expect(() => callOutcome(out, code), out).toThrow(
        expect.objectContaining({ code: 'E_INTERNAL', details: { exit_code: code } }),
      )
  })
})
