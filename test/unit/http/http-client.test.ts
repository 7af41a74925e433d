import { createServer } from 'node:net'
import { delay, HttpResponse, http } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { httpClient } from '../../../src/http/client.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

let api: Upstream
beforeAll(async () => {
  api = await startUpstream([])
})
afterAll(() => api.close())
afterEach(() => api.reset())

const failure = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (error) {
    return error as { code: string; details: Record<string, unknown> }
  }
  throw new Error('expected a failure')
}

function flaky(method: 'get' | 'post', path: string, failures: number, init: ResponseInit = { status: 503 }) {
  let calls = 0
  api.use(
    http[method](`*/${path}`, () =>
      ++calls <= failures ? HttpResponse.json({ error: 'busy' }, init) : HttpResponse.json({ calls }),
    ),
  )
  return () => calls
}

describe('httpClient retries and failures', () => {
  it('retries a retryable failure of an idempotent request, with its defaults', async () => {
    const calls = flaky('get', 'flaky', 1)
    const { data, status } = await httpClient({ baseUrl: api.url.slice(0, -1) }).get('flaky', {
      query: { a: 1, skip: undefined },
    })
    expect([status, data, calls()]).toEqual([200, { calls: 2 }, 2])
    expect(new URL(api.requests[0]!.url).search).toBe('?a=1')
    expect(api.requests[0]!.headers.get('user-agent')).toBe('agentcli')
  })

  it('never retries a POST unless it says it is idempotent', async () => {
    const calls = flaky('post', 'once', 1)
    expect(await failure(httpClient({ baseUrl: api.url }).post('once', { body: {} }))).toMatchObject({
      code: 'E_SERVER',
    })
    expect(calls()).toBe(1)
    const again = flaky('post', 'keyed', 1)
    await httpClient({ baseUrl: api.url }).post('keyed', { body: {}, idempotent: true })
    expect(again()).toBe(2)
  })

  it('waits out a short Retry-After, gives up on a long one', async () => {
    const calls = flaky('get', 'limited', 1, { status: 429, headers: { 'retry-after': '0' } })
    expect((await httpClient({ baseUrl: api.url }).get('limited')).data).toEqual({ calls: 2 })
    expect(calls()).toBe(2)
    const long = flaky('get', 'later', 1, { status: 429, headers: { 'retry-after': '60' } })
    expect(await failure(httpClient({ baseUrl: api.url }).get('later'))).toMatchObject({
      code: 'E_RATE_LIMITED',
      details: { retry_after_seconds: 60 },
    })
    expect(long()).toBe(1)
  })

  it('gives up after the retries it was given', async () => {
    const calls = flaky('get', 'down', 5)
    expect(await failure(httpClient({ baseUrl: api.url, retries: 1 }).get('down'))).toMatchObject({ code: 'E_SERVER' })
    expect(calls()).toBe(2)
  })

  it('times out a stalled response, and is interrupted by the command signal while backing off', async () => {
    api.use(
      http.get('*/slow', async () => {
        await delay(2000)
        return HttpResponse.json({})
      }),
    )
    expect(await failure(httpClient({ baseUrl: api.url, timeoutMs: 100, retries: 0 }).get('slow'))).toMatchObject({
      code: 'E_TIMEOUT',
    })
    const controller = new AbortController()
    flaky('get', 'busy', 5)
    api.use(http.delete('*/busy', () => HttpResponse.json({}, { status: 503 })))
    // Abort once the client is in its first backoff (a timer of 200–300 ms), not after a fixed delay: a loaded
    // machine could still be in the request then, and the test would check another path.
    const setTimer = globalThis.setTimeout
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      const timer = setTimer(fn, ms)
      if (ms !== undefined && ms >= 200 && ms < 300) queueMicrotask(() => controller.abort(new Error('stop')))
      return timer
    }) as typeof setTimeout)
    try {
      const pending = httpClient({ baseUrl: api.url, signal: controller.signal, retries: 3 }).delete('busy')
      await expect(pending).rejects.toThrow('stop')
    } finally {
      spy.mockRestore()
    }
  })

  it('an aborted command signal during a request is E_INTERRUPTED', async () => {
    api.use(
      http.put('*/wait', async () => {
        await delay(2000)
        return HttpResponse.json({})
      }),
    )
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 50)
    expect(await failure(httpClient({ baseUrl: api.url, signal: controller.signal }).put('wait'))).toMatchObject({
      code: 'E_INTERRUPTED',
    })
  })

  it('connection refused is E_NETWORK; a failing refresh propagates as it is', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer()
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port
        s.close(() => resolve(p))
      })
    })
    expect(await failure(httpClient({ baseUrl: `http://127.0.0.1:${port}/`, retries: 0 }).get('x'))).toMatchObject({
      code: 'E_NETWORK',
      details: { reason: 'connection_refused', errno: 'ECONNREFUSED' },
    })
    api.use(http.get('*/me', () => HttpResponse.json({}, { status: 401 })))
    const boom = new Error('keychain locked')
    const c = httpClient({
      baseUrl: api.url,
      token: async () => 't',
      refresh: async () => {
        throw boom
      },
    })
    await expect(c.get('me')).rejects.toBe(boom)
  })

  it('a body without a content-type is read as JSON when JSON was asked for, as text otherwise', async () => {
    api.use(http.get('*/bare', () => new HttpResponse(new TextEncoder().encode('{"a":1}'))))
    expect((await httpClient({ baseUrl: api.url }).get('bare')).data).toEqual({ a: 1 })
    const text = await httpClient({ baseUrl: api.url }).get('bare', { headers: { accept: 'text/plain' } })
    expect(text.data).toBe('{"a":1}')
  })

  it('a redirect loop is E_SERVER and not retried', async () => {
    api.use(http.get('*/loop', () => new HttpResponse(null, { status: 302, headers: { location: '/loop' } })))
    expect(await failure(httpClient({ baseUrl: api.url, retries: 2 }).get('loop'))).toMatchObject({
      code: 'E_SERVER',
      details: { reason: 'too_many_redirects' },
    })
    expect(api.requests).toHaveLength(6)
  })

  it('a 401 without a refresh hook is E_AUTH at once', async () => {
    api.use(http.get('*/me', () => HttpResponse.json({}, { status: 401 })))
    expect(await failure(httpClient({ baseUrl: api.url, token: async () => 't' }).get('me'))).toMatchObject({
      code: 'E_AUTH',
    })
    expect(api.requests).toHaveLength(1)
  })
})
