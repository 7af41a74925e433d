import { describe, expect, it } from 'vitest'
import { codeForStatus, errorForFailure, retryAfterSeconds } from '../../../src/http/status.js'

describe('upstream mapping', () => {
  it('maps every status class by number', () => {
    expect([400, 401, 403, 404, 408, 409, 412, 422, 429, 500, 502, 503, 418].map(codeForStatus)).toEqual([
      'E_VALIDATION',
      'E_AUTH',
      'E_FORBIDDEN',
      'E_NOT_FOUND',
      'E_TIMEOUT',
      'E_CONFLICT',
      'E_CONFLICT',
      'E_VALIDATION',
      'E_RATE_LIMITED',
      'E_SERVER',
      'E_SERVER',
      'E_SERVER',
      'E_INTERNAL',
    ])
  })
  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterSeconds('12')).toBe(12)
    expect(retryAfterSeconds(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4)
    expect(retryAfterSeconds('soon')).toBeUndefined()
    expect(retryAfterSeconds(null)).toBeUndefined()
  })
  it('maps failures by their code, not their message', () => {
    const url = new URL('http://x.test/a')
    const failure = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: { code } })
    expect(errorForFailure('GET', url, failure('ENOTFOUND'), false, false).code).toBe('E_NETWORK')
    expect(errorForFailure('GET', url, failure('ECONNRESET'), false, false).code).toBe('E_NETWORK')
    expect(errorForFailure('GET', url, failure('UND_ERR_HEADERS_TIMEOUT'), false, false).code).toBe('E_TIMEOUT')
    expect(errorForFailure('GET', url, new Error('x'), true, false).code).toBe('E_TIMEOUT')
    expect(errorForFailure('GET', url, new Error('x'), false, true).code).toBe('E_INTERRUPTED')
  })
})
