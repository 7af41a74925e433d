import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Sandbox } from 'agentcli/testing'
import { HttpResponse, http } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

// Command-level: the example's `whoami` calls GET v1/me with the bearer token through the framework's client.
/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()
const TOKEN = 'tk_canary_5f0e8c1d9a7b4e2f'
let api: Upstream
let foreign: Upstream

beforeAll(async () => {
  api = await startUpstream([])
  // Another origin: same host, another port (an origin is scheme + host + port).
  foreign = await startUpstream([http.get('*/v1/me', () => HttpResponse.json({ account: 'foreign' }))])
})
afterAll(async () => {
  await api.close()
  await foreign.close()
})
afterEach(() => {
  api.reset()
  foreign.reset()
})

function whoami(b: Sandbox, extra: Record<string, string> = {}) {
  return tasks(b, ['whoami'], {
    env: { TASKS_API_URL: api.url, TASKS_HTTP_RETRIES: '0', TASKS_TOKEN: TOKEN, ...extra },
  })
}

const authHeaders = (u: Upstream) => u.requests.map((r) => r.headers.get('authorization'))

describe('the bearer credential goes only to the configured origin', () => {
  it('a redirect within the origin keeps the credential', async () => {
    api.use(
      http.get('*/v1/me', () => new HttpResponse(null, { status: 307, headers: { location: '/v2/me' } })),
      http.get('*/v2/me', ({ request }) =>
        request.headers.get('authorization') === `Bearer ${TOKEN}`
          ? HttpResponse.json({ account: 'ann' })
          : HttpResponse.json({ error: 'no token' }, { status: 401 }),
      ),
    )
    const run = await whoami(box())
    expect(run.code, run.stdout).toBe(0)
    expect(env(run).data).toMatchObject({ account: 'ann', verified_by_api: true })
    expect(authHeaders(api)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`])
  })

  it.each([301, 302, 303, 307, 308])(
    'a %i redirect to another origin is followed without the credential',
    async (status) => {
      api.use(
        http.get('*/v1/me', () => new HttpResponse(null, { status, headers: { location: `${foreign.url}v1/me` } })),
      )
      const run = await whoami(box())
      expect(run.code, run.stdout).toBe(0)
      expect(env(run).data.account).toBe('foreign')
      expect(authHeaders(api)).toEqual([`Bearer ${TOKEN}`])
      expect(foreign.requests).toHaveLength(1)
      expect(authHeaders(foreign)).toEqual([null])
      expect(foreign.requests[0]!.headers.get('cookie')).toBeNull()
      expect(run.stdout + run.stderr).not.toContain(TOKEN)
    },
  )

  it('a 401 from the other origin is E_AUTH without a refresh or a second request carrying the token', async () => {
    foreign.use(http.get('*/v1/me', () => HttpResponse.json({ error: 'who?' }, { status: 401 })))
    api.use(
      http.get('*/v1/me', () => new HttpResponse(null, { status: 302, headers: { location: `${foreign.url}v1/me` } })),
    )
    const run = await whoami(box())
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({ code: 'E_AUTH', details: { upstream: { status: 401 } } })
    expect(authHeaders(foreign)).toEqual([null])
    expect(authHeaders(api)).toEqual([`Bearer ${TOKEN}`])
  })

  it('a redirect loop is E_SERVER (too_many_redirects), not a hang', async () => {
    api.use(http.get('*/v1/me', () => new HttpResponse(null, { status: 302, headers: { location: '/v1/me' } })))
    const run = await whoami(box())
    expect(run.code).toBe(7)
    expect(env(run).error).toMatchObject({ code: 'E_SERVER', details: { reason: 'too_many_redirects' } })
    expect(api.requests).toHaveLength(6)
  })

  it('a redirect to another scheme is refused as E_SERVER (bad_redirect)', async () => {
    api.use(
      http.get('*/v1/me', () => new HttpResponse(null, { status: 302, headers: { location: 'file:///etc/passwd' } })),
    )
    const run = await whoami(box())
    expect(run.code).toBe(7)
    expect(env(run).error).toMatchObject({ code: 'E_SERVER', details: { reason: 'bad_redirect' } })
  })
})

describe('bodies', () => {
  it('a body that stalls past the timeout is E_TIMEOUT (exit 8), promptly', async () => {
    const stalled: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"account": "an')
      // …and never ends.
    })
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve))
    try {
      const started = Date.now()
      const run = await whoami(box(), {
        TASKS_API_URL: `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/`,
        TASKS_HTTP_TIMEOUT_MS: '400',
      })
      expect(run.code, run.stdout).toBe(8)
      expect(env(run).error).toMatchObject({ code: 'E_TIMEOUT', retryable: true })
      expect(Date.now() - started).toBeLessThan(8000)
    } finally {
      stalled.closeAllConnections()
      await new Promise((resolve) => stalled.close(resolve))
    }
  })

  it.each([
    ['truncated JSON', 'application/json', '{"account": "an'],
    ['an HTML page behind a 200', 'text/html', '<html><body>Sign in to the proxy</body></html>'],
  ])('%s is E_SERVER malformed_body with a teaching message, not E_INTERNAL', async (_, type, body) => {
    api.use(http.get('*/v1/me', () => new HttpResponse(body, { headers: { 'content-type': type } })))
    const run = await whoami(box())
    expect(run.code, run.stdout).toBe(7)
    const error = env(run).error
    expect(error).toMatchObject({
      code: 'E_SERVER',
      details: {
        reason: 'malformed_body',
        upstream: { status: 200, content_type: type, method: 'GET' },
        _untrusted: ['upstream.body'],
      },
    })
    expect(error.message).toMatch(/not valid JSON.*check that the configured URL points at the API/)
    expect(api.requests).toHaveLength(1)
  })
})

describe('name resolution', () => {
  it('a host that does not resolve is E_NETWORK name_resolution with the host and a hint, tried once', async () => {
    const run = await whoami(box(), { TASKS_API_URL: 'http://agentcli-test.invalid/', TASKS_HTTP_RETRIES: '2' })
    expect(run.code).toBe(7)
    const error = env(run).error
    expect(error).toMatchObject({
      code: 'E_NETWORK',
      retryable: true,
      details: { reason: 'name_resolution', host: 'agentcli-test.invalid' },
    })
    expect(error.details.hint).toMatch(/does not resolve.*before retrying/)
    expect(error.message).toContain('cannot resolve the host agentcli-test.invalid')
  })
})
