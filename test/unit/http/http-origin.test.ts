import { HttpResponse, http } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { parseBody } from '../../../src/http/body.js'
import { httpClient } from '../../../src/http/client.js'
import { hopHeaders, MAX_REDIRECTS, nextHop, resolveUrl } from '../../../src/http/origin.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

const TOKEN = 'tk_unit_canary_0a1b2c3d'
let api: Upstream
let other: Upstream

beforeAll(async () => {
  const me = http.get('*/v1/me', ({ request }) => HttpResponse.json({ auth: request.headers.get('authorization') }))
  api = await startUpstream([me])
  other = await startUpstream([me])
})
afterAll(async () => {
  await api.close()
  await other.close()
})
afterEach(() => {
  api.reset()
  other.reset()
})

const client = (extra: Partial<Parameters<typeof httpClient>[0]> = {}) =>
  httpClient({ baseUrl: api.url, retries: 0, timeoutMs: 2000, token: async () => TOKEN, ...extra })

const caught = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (error) {
    return error as { code: string; details: Record<string, unknown> }
  }
  throw new Error('expected a failure')
}

describe('a path or a next link that names another origin', () => {
  const otherPort = () => new URL(other.url).port
  it.each([
    ['an absolute URL', () => `${other.url}v1/me`],
    ['a scheme-relative URL after the leading slash is stripped', () => `///127.0.0.1:${otherPort()}/v1/me`],
    ['a backslash form', () => `\\\\127.0.0.1:${otherPort()}/v1/me`],
    ['localhost, another host spelling of the same machine', () => `http://localhost:${new URL(api.url).port}/v1/me`],
  ])('%s gets no credential, and the token is not even asked for', async (_, path) => {
    let asked = 0
    const c = client({
      token: async () => {
        asked++
        return TOKEN
      },
    })
    const { data } = await c.get<{ auth: string | null }>(path())
    expect(data.auth).toBeNull()
    expect(asked).toBe(0)
  })

  it('a relative path and a same-origin absolute URL carry it', async () => {
    expect((await client().get<{ auth: string }>('/v1/me')).data.auth).toBe(`Bearer ${TOKEN}`)
    expect((await client().get<{ auth: string }>(`${api.url}v1/me`)).data.auth).toBe(`Bearer ${TOKEN}`)
  })

  it('a caller-set Authorization or Cookie header is dropped on a redirect to another origin', async () => {
    api.use(
      http.get('*/hop', () => new HttpResponse(null, { status: 302, headers: { location: `${other.url}v1/me` } })),
    )
    const c = httpClient({ baseUrl: api.url, retries: 0 })
    const { data } = await c.get<{ auth: string | null }>('hop', {
      headers: { authorization: 'Basic abc', cookie: 's=1' },
    })
    expect(data.auth).toBeNull()
    expect(other.requests[0]!.headers.get('cookie')).toBeNull()
  })

  it('a POST answered 303 becomes a GET without the body on the next hop', async () => {
    api.use(
      http.post('*/jobs', () => new HttpResponse(null, { status: 303, headers: { location: '/jobs/1' } })),
      http.get('*/jobs/1', ({ request }) =>
        HttpResponse.json({ method: request.method, type: request.headers.get('content-type') }),
      ),
    )
    const { data } = await client().post<{ method: string; type: string | null }>('jobs', { body: { a: 1 } })
    expect(data).toEqual({ method: 'GET', type: null })
  })

  it('a 307 keeps the method and the body', async () => {
    api.use(
      http.put('*/a', () => new HttpResponse(null, { status: 307, headers: { location: '/b' } })),
      http.put('*/b', async ({ request }) => HttpResponse.json({ body: await request.json() })),
    )
    expect((await client().put('a', { body: { x: 2 } })).data).toEqual({ body: { x: 2 } })
  })

  it('a 401 on the configured origin refreshes once and retries with the new token', async () => {
    let calls = 0
    api.use(
      http.get('*/secure', ({ request }) => {
        calls++
        return request.headers.get('authorization') === 'Bearer fresh'
          ? HttpResponse.json({ ok: true })
          : HttpResponse.json({}, { status: 401 })
      }),
    )
    const { data } = await client({ refresh: async () => 'fresh' }).get('secure')
    expect(data).toEqual({ ok: true })
    expect(calls).toBe(2)
  })

  it('a 401 from another origin does not refresh', async () => {
    other.use(http.get('*/v1/me', () => HttpResponse.json({}, { status: 401 })))
    let refreshed = 0
    const c = client({
      refresh: async () => {
        refreshed++
        return 'fresh'
      },
    })
    expect(await caught(c.get(`${other.url}v1/me`))).toMatchObject({ code: 'E_AUTH' })
    expect(refreshed).toBe(0)
  })
})

describe('origin helpers', () => {
  const base = new URL('https://api.example.com/v1/')
  it('resolves paths against the base with or without a trailing slash', () => {
    expect(resolveUrl('https://api.example.com/v1', 'items').href).toBe('https://api.example.com/v1/items')
    expect(resolveUrl('https://api.example.com/v1/', '/items').href).toBe('https://api.example.com/v1/items')
  })

  it('attaches the token on the origin only; strips credential headers elsewhere, also on a scheme downgrade', () => {
    const given = new Headers({ authorization: 'x', cookie: 'c', 'proxy-authorization': 'p', accept: 'a' })
    const same = hopHeaders(new URL('https://api.example.com/other'), base.origin, given, 't')
    expect(same.get('authorization')).toBe('Bearer t')
    expect(hopHeaders(new URL('https://api.example.com/x'), base.origin, given, undefined).get('authorization')).toBe(
      'x',
    )
    for (const elsewhere of ['http://api.example.com/x', 'https://api.example.com:8443/x', 'https://evil.example/x']) {
      const h = hopHeaders(new URL(elsewhere), base.origin, given, 't')
      expect([h.get('authorization'), h.get('cookie'), h.get('proxy-authorization'), h.get('accept')]).toEqual([
        null,
        null,
        null,
        'a',
      ])
    }
  })

  it('follows redirects by the fetch rules and refuses bad ones', () => {
    const here = new URL('https://api.example.com/a')
    expect(nextHop(200, null, here, 'GET', 0)).toBeUndefined()
    expect(nextHop(304, '/x', here, 'GET', 0)).toBeUndefined()
    expect(nextHop(301, '/b', here, 'POST', 0)).toMatchObject({ method: 'GET', dropBody: true })
    expect(nextHop(302, '/b', here, 'PUT', 0)).toMatchObject({ method: 'PUT', dropBody: false })
    expect(nextHop(303, '/b', here, 'HEAD', 0)).toMatchObject({ method: 'HEAD', dropBody: true })
    expect(nextHop(308, 'https://b.example/c', here, 'DELETE', 0)?.url.href).toBe('https://b.example/c')
    const reason = (f: () => unknown) => {
      try {
        f()
      } catch (error) {
        return (error as { code: string; details: { reason: string } }).details.reason
      }
      return 'none'
    }
    expect(reason(() => nextHop(302, null, here, 'GET', 0))).toBe('bad_redirect')
    expect(reason(() => nextHop(302, 'http://[bad', here, 'GET', 0))).toBe('bad_redirect')
    expect(reason(() => nextHop(302, 'javascript:alert(1)', here, 'GET', 0))).toBe('bad_redirect')
    expect(reason(() => nextHop(302, '/b', here, 'GET', MAX_REDIRECTS))).toBe('too_many_redirects')
  })
})

describe('parseBody', () => {
  const url = new URL('https://api.example.com/v1/me')
  it('parses JSON when asked for or labelled, passes text otherwise and keeps an empty body', () => {
    expect(parseBody('GET', url, 200, 'application/json; charset=utf-8', '*/*', '{"a":1}')).toEqual({ a: 1 })
    expect(parseBody('GET', url, 200, 'text/plain', 'application/json', '[1]')).toEqual([1])
    expect(parseBody('GET', url, 200, 'text/plain', 'text/plain', 'hello')).toBe('hello')
    expect(parseBody('GET', url, 204, 'application/json', 'application/json', '')).toBe('')
  })

  it('refuses a malformed JSON body as E_SERVER malformed_body, the body marked untrusted and cut short', () => {
    let error: { code?: string; message?: string; details?: Record<string, unknown> } = {}
    try {
      parseBody('GET', url, 200, '', 'application/json', `<html>${'x'.repeat(2000)}`)
    } catch (e) {
      error = e as typeof error
    }
    expect(error).toMatchObject({
      code: 'E_SERVER',
      details: { reason: 'malformed_body', upstream: { content_type: 'no content-type', status: 200 } },
    })
    expect(((error.details!.upstream as { body: string }).body as string).length).toBe(512)
    expect(error.message).toContain('not valid JSON')
  })
})
