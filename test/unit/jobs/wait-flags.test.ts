import { describe, expect, it } from 'vitest'
import { describeParam } from '../../../src/describe/params.js'
import { WAIT_FLAGS } from '../../../src/jobs/wait-flags.js'

describe('the wait flags every async command gets', () => {
  it('describe --wait-timeout as an integer with its bounds, as `job status` does', () => {
    const param = describeParam('wait-timeout', 'flag', WAIT_FLAGS['wait-timeout'] as never)
    expect(param).toMatchObject({ type: 'integer', minimum: 1, maximum: 86_400, default: 600 })
  })

  it('refuse a value that is no integer with allowed and got', async () => {
    const parse = (WAIT_FLAGS['wait-timeout'] as unknown as { parse: (v: string) => Promise<number> }).parse
    await expect(parse('abc')).rejects.toMatchObject({
      code: 'E_VALIDATION',
      details: { allowed: { type: 'integer', min: 1, max: 86_400 }, got: 'abc' },
    })
    expect(await parse('30')).toBe(30)
  })
})
