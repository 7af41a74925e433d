// The worker of an async write re-checks the policy: the same policy, arguments and targets give the same verdict,
// so a policy changed (or gone, or added) since the confirm stops the job before its plan is even recomputed.
import { describe, expect, it } from 'vitest'
import type { JobRecord } from '../../../src/jobs/types.js'
import { confirmedPlan } from '../../../src/write/job-check.js'

const targets = [{ id: 'file:/x', version: 'abc' }]
const record = (policy?: string) =>
  ({ job_id: 'job_1', plan: { token_id: 'tok', targets, ...(policy ? { policy } : {}) } }) as unknown as JobRecord

describe('the worker re-checks the policy', () => {
  it.each([
    ['changed', 'pol_a', 'pol_b'],
    ['added', undefined, 'pol_b'],
    ['gone', 'pol_a', undefined],
  ])('refuses a job whose policy %s since the confirm, without planning', async (_, then, now) => {
    let planned = 0
    const plan = async () => {
      planned++
      return { changes: [], targets }
    }
    await expect(confirmedPlan(record(then), plan, { bin: 't', id: 'import', policy: now })).rejects.toMatchObject({
      code: 'E_CONFLICT',
      details: { reason: 'policy_changed', token_id: 'tok' },
    })
    expect(planned).toBe(0)
  })

  it('applies under the same policy', async () => {
    const plan = async () => ({ changes: [], targets })
    expect(await confirmedPlan(record('pol_a'), plan, { bin: 't', id: 'import', policy: 'pol_a' })).toEqual({
      changes: [],
      targets,
    })
  })
})
