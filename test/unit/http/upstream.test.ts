import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { delay, HttpResponse, http } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'
import { schemaValidator } from '../../support/schema.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()
const TOKEN = 'tk_env_0123456789abcdef'
let api: Upstream

const remoteTasks = Array.from({ length: 5 }, (_, i) => ({
  id: `r${i + 1}`,
  title: `remote ${i + 1}`,
  status: 'open',
  updated_at: '2026-11-01T00:00:00.000Z',
}))

beforeAll(async () => {
  api = await startUpstream([
    http.get('*/v1/me', ({ request }) => {
      const auth = request.headers.get('authorization')
      return auth === `Bearer ${TOKEN}` || auth === 'Bearer tk_new'
        ? HttpResponse.json({ account: 'ann' })
        : HttpResponse.json({ error: 'unauthorized' }, { status: 401 })
    }),
    http.get('*/v1/tasks', ({ request }) => {
      const cursor = Number(new URL(request.url).searchParams.get('cursor') ?? 0)
      const items = remoteTasks.slice(cursor, cursor + 2)
      return HttpResponse.json({ items, next_cursor: cursor + 2 < remoteTasks.length ? String(cursor + 2) : null })
    }),
    http.post('*/oauth/token', async ({ request }) => {
      const body = (await request.json()) as { grant_type: string; refresh_token?: string }
      if (body.grant_type === 'refresh_token' && body.refresh_token === 'rt_good')
        return HttpResponse.json({ access_token: 'tk_new', refresh_token: 'rt_next', expires_in: 3600, account: 'ann' })
      return HttpResponse.json({ error: 'invalid_grant' }, { status: 400 })
    }),
  ])
})
afterAll(() => api.close())
afterEach(() => api.reset())

function run(b: Sandbox, args: string[], extra: Record<string, string> = {}) {
  return tasks(b, args, { env: { TASKS_API_URL: api.url, TASKS_HTTP_RETRIES: '0', TASKS_TOKEN: TOKEN, ...extra } })
}

/** A stored, refreshable login in the credentials file (the keychain suite covers the keychain). */
function storeLogin(
  b: Sandbox,
  record: { access_token: string; refresh_token: string | null; expires_at: string | null },
): void {
  const dir = join(b.env.XDG_CONFIG_HOME!, 'tasks')
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  writeFileSync(
    join(dir, 'credentials.json'),
    JSON.stringify({ version: 1, accounts: { ann: { account: 'ann', scopes: [], ...record } } }),
    { mode: 0o600 },
  )
  writeFileSync(join(dir, 'session.json'), JSON.stringify({ account: 'ann' }))
}

describe('upstream HTTP errors map to the catalogue', () => {
  const cases: Array<[number, string, number, boolean]> = [
    [400, 'E_VALIDATION', 2, false],
    [403, 'E_FORBIDDEN', 4, false],
    [404, 'E_NOT_FOUND', 3, false],
    [408, 'E_TIMEOUT', 8, true],
    [409, 'E_CONFLICT', 6, false],
    [412, 'E_CONFLICT', 6, false],
    [422, 'E_VALIDATION', 2, false],
    [500, 'E_SERVER', 7, true],
    [503, 'E_SERVER', 7, true],
  ]
  it.each(cases)('HTTP %i → %s, exit %i, retryable %s', async (status, code, exit, retryable) => {
    api.use(http.get('*/v1/me', () => HttpResponse.json({ error: `nope ${status}` }, { status })))
    const result = await run(box(), ['whoami'])
    expect(result.code).toBe(exit)
    expect(env(result).error).toMatchObject({
      code,
      retryable,
      details: { upstream: { status, method: 'GET' }, _untrusted: ['upstream.body'] },
    })
    expect(env(result).error.details.upstream.body).toContain(`nope ${status}`)
  })

  it('429 → E_RATE_LIMITED with retry_after_seconds from Retry-After', async () => {
    api.use(
      http.get('*/v1/me', () =>
        HttpResponse.json({ error: 'slow down' }, { status: 429, headers: { 'retry-after': '30' } }),
      ),
    )
    const result = await run(box(), ['whoami'])
    expect(result.code).toBe(7)
    expect(env(result).error).toMatchObject({
      code: 'E_RATE_LIMITED',
      retryable: true,
      details: { retry_after_seconds: 30 },
    })
  })

  it('a client timeout → E_TIMEOUT, exit 8', async () => {
    api.use(
      http.get('*/v1/me', async () => {
        await delay(3000)
        return HttpResponse.json({ account: 'late' })
      }),
    )
    const result = await run(box(), ['whoami'], { TASKS_HTTP_TIMEOUT_MS: '300' })
    expect(result.code).toBe(8)
    expect(env(result).error).toMatchObject({ code: 'E_TIMEOUT', retryable: true })
  })

  it('connection refused → E_NETWORK, exit 7', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer()
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port
        s.close(() => resolve(port))
      })
    })
    const result = await run(box(), ['whoami'], { TASKS_API_URL: `http://127.0.0.1:${closed}/` })
    expect(result.code).toBe(7)
    expect(env(result).error).toMatchObject({
      code: 'E_NETWORK',
      retryable: true,
      details: { reason: 'connection_refused', errno: 'ECONNREFUSED' },
    })
  })

  it('retries retryable failures of idempotent requests with backoff, then succeeds', async () => {
    let calls = 0
    api.use(
      http.get('*/v1/me', () =>
        ++calls < 3 ? HttpResponse.json({}, { status: 503 }) : HttpResponse.json({ account: 'ann' }),
      ),
    )
    const result = await run(box(), ['whoami'], { TASKS_HTTP_RETRIES: '2' })
    expect(result.code).toBe(0)
    expect(calls).toBe(3)
  })

  it('waits out a short Retry-After, then succeeds', async () => {
    let calls = 0
    api.use(
      http.get('*/v1/me', () =>
        ++calls < 2
          ? HttpResponse.json({}, { status: 429, headers: { 'retry-after': '1' } })
          : HttpResponse.json({ account: 'ann' }),
      ),
    )
    const result = await run(box(), ['whoami'], { TASKS_HTTP_RETRIES: '1' })
    expect(result.code).toBe(0)
    expect(calls).toBe(2)
  })

  it('does not retry a non-idempotent request', async () => {
    let calls = 0
    api.use(
      http.post('*/oauth/device/code', () => {
        calls++
        return HttpResponse.json({}, { status: 503 })
      }),
    )
    const result = await run(box(), ['login'], { TASKS_HTTP_RETRIES: '2', TASKS_TOKEN: '' })
    expect(result.code).toBe(7)
    expect(calls).toBe(1)
  })
})

describe('credentials against the upstream', () => {
  it('success: whoami asks the API with the injected token', async () => {
    const result = await run(box(), ['whoami'])
    expect(env(result).data).toEqual({ account: 'ann', source: 'env', expires_at: null, verified_by_api: true })
  })

  it('401, then a transparent refresh, then success; the new token is stored', async () => {
    storeLogin(box(), {
      access_token: 'tk_old',
      refresh_token: 'rt_good',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    })
    const result = await run(box(), ['whoami'], { TASKS_TOKEN: '', TASKS_CREDENTIAL_STORE: 'file' })
    expect(result.code, result.stdout).toBe(0)
    expect(env(result).data.account).toBe('ann')
    const stored = readFileSync(join(box().env.XDG_CONFIG_HOME!, 'tasks', 'credentials.json'), 'utf8')
    expect(stored).toContain('tk_new')
    expect(api.requests.filter((r) => r.url.endsWith('/oauth/token'))).toHaveLength(1)
  })

  it('an expired token is refreshed before the request', async () => {
    storeLogin(box(), { access_token: 'tk_expired', refresh_token: 'rt_good', expires_at: '2020-01-01T00:00:00.000Z' })
    const result = await run(box(), ['whoami'], { TASKS_TOKEN: '', TASKS_CREDENTIAL_STORE: 'file' })
    expect(result.code).toBe(0)
    expect(api.requests.find((r) => r.url.endsWith('/v1/me'))!.headers.get('authorization')).toBe('Bearer tk_new')
  })

  it('401 with a failed refresh → E_AUTH, exit 4, naming the login command', async () => {
    storeLogin(box(), { access_token: 'tk_old', refresh_token: 'rt_revoked', expires_at: null })
    const result = await run(box(), ['whoami'], { TASKS_TOKEN: '', TASKS_CREDENTIAL_STORE: 'file' })
    expect(result.code).toBe(4)
    expect(env(result).error).toMatchObject({ code: 'E_AUTH', retryable: false, details: { reauth: 'tasks login' } })
  })

  it('401 again after a successful refresh → E_AUTH naming the login command', async () => {
    api.use(http.get('*/v1/me', () => HttpResponse.json({ error: 'revoked' }, { status: 401 })))
    storeLogin(box(), { access_token: 'tk_old', refresh_token: 'rt_good', expires_at: null })
    const result = await run(box(), ['whoami'], { TASKS_TOKEN: '', TASKS_CREDENTIAL_STORE: 'file' })
    expect(result.code).toBe(4)
    expect(env(result).error).toMatchObject({ code: 'E_AUTH', details: { reauth: 'tasks login' } })
    expect(api.requests.filter((r) => r.url.endsWith('/oauth/token'))).toHaveLength(1)
  })

  it('401 with an injected token that cannot be refreshed → E_AUTH', async () => {
    const result = await run(box(), ['whoami'], { TASKS_TOKEN: 'tk_wrong_123456' })
    expect(result.code).toBe(4)
    expect(env(result).error.details.reauth).toBe('tasks login')
  })

  it('not logged in → E_AUTH with reauth', async () => {
    const result = await run(box(), ['whoami'], { TASKS_TOKEN: '', TASKS_CREDENTIAL_STORE: 'file' })
    expect(result.code).toBe(4)
    expect(env(result).error.details.reauth).toBe('tasks login')
  })

  it('context and doctor report an expiring, refreshable login without any secret', async () => {
    storeLogin(box(), {
      access_token: 'tk_canary_ctx_777',
      refresh_token: 'rt_canary_ctx_777',
      expires_at: new Date(Date.now() + 600_000).toISOString(),
    })
    const extra = { TASKS_TOKEN: '', TASKS_CREDENTIAL_STORE: 'file' }
    const ctx = await run(box(), ['context'], extra)
    expect(env(ctx).data.credentials).toMatchObject({
      configured: true,
      valid: true,
      refreshable: true,
      source: 'file',
    })
    expect(env(ctx).data.account).toBe('ann')
    const doc = await run(box(), ['doctor'], extra)
    expect(env(doc).data.checks.find((c: { check: string }) => c.check === 'credentials')).toMatchObject({
      status: 'warn',
    })
    for (const out of [ctx, doc]) expect(out.stdout + out.stderr).not.toMatch(/canary_ctx/)
  })
})

describe('sync (pagination, empty results, the write gate)', () => {
  it('reads every page, previews, and creates the remote tasks on confirm', async () => {
    const dry = await run(box(), ['sync', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(env(dry).data.preview.changes).toHaveLength(5)
    expect(api.requests.filter((r) => r.url.includes('/v1/tasks'))).toHaveLength(3)
    const done = await run(box(), ['sync', '--confirm', env(dry).data.confirm_token])
    expect(env(done).data).toEqual({ created: 5, updated: 0, unchanged: 0 })
    const ref = env(await run(box(), ['reference'])).data
    const validate = schemaValidator().compile(
      ref.commands.find((c: { path: string }) => c.path === 'sync').output_schema,
    )
    expect(validate(env(done).data)).toBe(true)
    expect(validate(env(dry).data)).toBe(true)
    const listed = env(await run(box(), ['list'])).data
    expect(listed.count).toBe(5)
    // Titles came from the upstream: a third party's text, marked so an agent treats it as data.
    expect(listed.items[0]).toMatchObject({ title: 'remote 1', remote_id: 'r1', _untrusted: ['title'] })
    expect(env(await run(box(), ['list', '--fields', 'title'])).data.items[0]).toEqual({
      title: 'remote 1',
      _untrusted: ['title'],
    })
    expect(env(await run(box(), ['list', '--fields', 'id'])).data.items[0]).toEqual({ id: '1' })
    expect(env(await run(box(), ['get', '1'])).data._untrusted).toEqual(['title'])
    const again = await run(box(), ['sync', '--dry-run'])
    expect(env(again).data.preview.changes).toEqual([])
  })

  it('an empty remote list previews no change', async () => {
    api.use(http.get('*/v1/tasks', () => HttpResponse.json({ items: [], next_cursor: null })))
    const dry = await run(box(), ['sync', '--dry-run'])
    expect(env(dry).data.preview.changes).toEqual([])
  })

  it('a remote change between dry-run and confirm is state_drift', async () => {
    const dry = await run(box(), ['sync', '--dry-run'])
    api.use(
      http.get('*/v1/tasks', () =>
        HttpResponse.json({
          items: [{ ...remoteTasks[0], updated_at: '2026-11-02T00:00:00.000Z' }],
          next_cursor: null,
        }),
      ),
    )
    const done = await run(box(), ['sync', '--confirm', env(dry).data.confirm_token])
    expect(done.code).toBe(6)
  })

  it('without a configured API, sync is E_CONFIG and the local store keeps working', async () => {
    const result = await tasks(box(), ['sync', '--dry-run'])
    expect(result.code).toBe(4)
    expect(env(result).error).toMatchObject({
      code: 'E_CONFIG',
      details: { fix: expect.stringContaining('TASKS_API_URL') },
    })
    expect((await tasks(box(), ['list'])).code).toBe(0)
  })
})

describe('a canary token never leaves the process', () => {
  const CANARY = 'canary-9f8e7d6c5b4a3210'

  it('from env, in a request header, and echoed in an upstream error body', async () => {
    api.use(
      http.get('*/v1/me', ({ request }) =>
        HttpResponse.json(
          { error: `bad credentials: ${request.headers.get('authorization')}`, token: CANARY },
          { status: 500 },
        ),
      ),
    )
    const runs = [
      await run(box(), ['whoami'], { TASKS_TOKEN: CANARY }),
      await run(box(), ['context'], { TASKS_TOKEN: CANARY }),
      await run(box(), ['doctor'], { TASKS_TOKEN: CANARY }),
    ]
    expect(env(runs[0]!).error.code).toBe('E_SERVER')
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(CANARY)
    const dry = await run(box(), ['sync', '--dry-run'], { TASKS_TOKEN: CANARY })
    await run(box(), ['sync', '--confirm', env(dry).data.confirm_token], { TASKS_TOKEN: CANARY })
    expect(readFileSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')).not.toContain(CANARY)
  })

  it('from the credentials file, refreshed, and echoed back', async () => {
    storeLogin(box(), { access_token: CANARY, refresh_token: `${CANARY}-rt`, expires_at: null })
    api.use(
      http.get('*/v1/me', ({ request }) =>
        HttpResponse.text(`denied ${request.headers.get('authorization')}`, { status: 403 }),
      ),
    )
    const extra = { TASKS_TOKEN: '', TASKS_CREDENTIAL_STORE: 'file' }
    const runs = [
      await run(box(), ['whoami'], extra),
      await run(box(), ['context'], extra),
      await run(box(), ['doctor'], extra),
      await run(box(), ['login'], extra),
    ]
    expect(env(runs[0]!).error.code).toBe('E_FORBIDDEN')
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(CANARY)
  })
})
