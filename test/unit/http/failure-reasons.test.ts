import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { errorForFailure } from '../../../src/http/status.js'

const url = new URL('http://api.test:8080/tasks')
/** fetch's shape: a TypeError("fetch failed") whose cause carries the system's code. */
const fetchFailed = (cause: unknown) => Object.assign(new TypeError('fetch failed'), { cause })
const reasonOf = (error: unknown, timedOut = false) => {
  const e = errorForFailure('GET', url, error, timedOut, false)
  return { code: e.code, reason: e.details.reason, errno: e.details.errno, hint: e.details.hint }
}

describe('a request that got no response says why', () => {
  it.each([
    ['ECONNREFUSED', 'E_NETWORK', 'connection_refused'],
    ['ECONNRESET', 'E_NETWORK', 'connection_reset'],
    ['UND_ERR_SOCKET', 'E_NETWORK', 'connection_reset'],
    ['EPIPE', 'E_NETWORK', 'connection_reset'],
    ['EHOSTUNREACH', 'E_NETWORK', 'host_unreachable'],
    ['ENETUNREACH', 'E_NETWORK', 'network_unreachable'],
    ['EADDRNOTAVAIL', 'E_NETWORK', 'address_unavailable'],
    ['ENOTFOUND', 'E_NETWORK', 'name_resolution'],
    ['EAI_AGAIN', 'E_NETWORK', 'name_resolution'],
    ['ETIMEDOUT', 'E_TIMEOUT', 'connect_timeout'],
    ['UND_ERR_CONNECT_TIMEOUT', 'E_TIMEOUT', 'connect_timeout'],
    ['UND_ERR_HEADERS_TIMEOUT', 'E_TIMEOUT', 'response_timeout'],
    ['CERT_HAS_EXPIRED', 'E_NETWORK', 'tls'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'E_NETWORK', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'E_NETWORK', 'tls'],
  ])('%s is %s with reason %s, the code as errno, and a hint', (errno, code, reason) => {
    const got = reasonOf(fetchFailed({ code: errno }))
    expect(got).toMatchObject({ code, reason })
    if (code === 'E_NETWORK') {
      expect(got.errno).toBe(errno)
      expect(got.hint).toEqual(expect.any(String))
    }
  })

  it('finds the code wherever the runtime put it: on the error, a nested cause, an AggregateError of attempts', () => {
    expect(reasonOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).reason).toBe('connection_refused')
    expect(reasonOf(fetchFailed({ cause: { code: 'ECONNRESET' } })).reason).toBe('connection_reset')
    const attempts = Object.assign(new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }]), {
      code: 'ERR_AGGREGATE_ERROR',
    })
    expect(reasonOf(fetchFailed(attempts)).reason).toBe('connection_refused')
    // A cause that refers back to itself does not loop.
    const loop: { cause?: unknown } = {}
    loop.cause = loop
    expect(reasonOf(fetchFailed(loop)).reason).toBe('unknown')
  })

  it('a port fetch blocks is bad_port; an unlisted code is named; only no code at all is unknown', () => {
    expect(reasonOf(fetchFailed(new Error('bad port')))).toMatchObject({ code: 'E_NETWORK', reason: 'bad_port' })
    expect(reasonOf(fetchFailed({ code: 'ESOMETHING' }))).toMatchObject({ reason: 'esomething', errno: 'ESOMETHING' })
    expect(reasonOf(fetchFailed(new Error('?'))).reason).toBe('unknown')
    expect(reasonOf(new Error('x'), true)).toMatchObject({ code: 'E_TIMEOUT', reason: 'response_timeout' })
  })

  it('a real refused connection through fetch is connection_refused', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer()
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port
        s.close(() => resolve(p))
      })
    })
    const target = new URL(`http://127.0.0.1:${port}/`)
    const error = await fetch(target).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(errorForFailure('GET', target, error, false, false).details).toMatchObject({
      reason: 'connection_refused',
      errno: 'ECONNREFUSED',
      hint: `nothing accepts connections at 127.0.0.1:${port}: the server is down or the port in the URL is wrong`,
    })
  })
})
