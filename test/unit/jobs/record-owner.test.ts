import { describe, expect, it } from 'vitest'
import { jobRecordProblem, pendingRecord } from '../../../src/jobs/record.js'

const JOB = 'job_0123456789abcdef0123'
const base = { job_id: JOB, command: 'sleepy', argv: [], schema_version: '1.0' }

describe("a job record's owner (the remote subject that submitted it)", () => {
  it('is kept when given and absent otherwise; both are valid records', () => {
    const owned = pendingRecord({ ...base, owner: '{"iss":"local","sub":"ann"}' })
    expect(owned.owner).toBe('{"iss":"local","sub":"ann"}')
    expect(jobRecordProblem(owned, JOB)).toBeUndefined()
    const plain = pendingRecord(base)
    expect('owner' in plain).toBe(false)
    expect(jobRecordProblem(plain, JOB)).toBeUndefined()
  })

  it('anything else in its place makes the record corrupt, never a job anyone may read', () => {
    for (const owner of ['', 42, null, { sub: 'ann' }])
      expect(jobRecordProblem({ ...pendingRecord(base), owner }, JOB), JSON.stringify(owner)).toMatch(/^owner is/)
  })
})
