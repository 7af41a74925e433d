// Command-level, adversarial tests of redaction: the real tools (the example `tasks`, the fixture CLI) run
// in-process (test/support/in-process.ts) with a canary secret, and every output surface is read — JSON, text, raw,
// NDJSON, stderr, the audit log, the framework's files at rest — and prose full of
// "basic/token/bearer/secret/password" words round-trips. Moved from the spawn tier with every assertion kept; a
// command's stray writes to the process's own stderr/stdout stay in test/cli/output/redaction.test.ts. The redactor
// itself: redaction.test.ts.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { HttpResponse, http } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { env, seed, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, tasksInProcess as tasks } from '../../support/in-process.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

const box = useSandbox()
const CANARY = 'canary-5e4d3c2b1a09f8e7'

const PROSE = [
  'basic training plan',
  'token economy review',
  'bearer bonds',
  'secret santa party',
  'password reset for the team',
  'Authorization: pending review',
  'Bearer 2nd-quarter-2026-review',
  'cookie: chocolate chip, token of thanks',
]

function auditText(b: Sandbox): string {
  const path = join(b.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl')
  return existsSync(path) ? readFileSync(path, 'utf8') : ''
}

/** Every file under a directory, concatenated (the framework's state at rest). */
function filesUnder(dir: string): string {
  if (!existsSync(dir)) return ''
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n')
}

function expectClean(runs: ToolRun[], ...secrets: string[]): void {
  for (const run of runs) for (const secret of secrets) expect(run.stdout + run.stderr).not.toContain(secret)
}

describe('prose with credential words round-trips on every surface', () => {
  it('in the preview, the created task, get, list, export (NDJSON, text, raw), and the audit log', async () => {
    for (const title of PROSE.slice(0, 3)) {
      const dry = await tasks(box(), ['create', '--title', title, '--dry-run'])
      expect(env(dry).data.preview.changes[0].after.title).toBe(title)
      const made = await tasks(box(), ['create', '--title', title, '--confirm', env(dry).data.confirm_token])
      expect(made.code).toBe(0)
      expect(env(made).data.title).toBe(title)
    }
    const lines = auditText(box())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.filter((l) => l.mode === 'confirm')).toHaveLength(3)
    for (const [i, title] of PROSE.slice(0, 3).entries()) expect(lines[2 * i].args).toContain(title)

    seed(
      box(),
      PROSE.map((title, i) => ({ id: String(i + 1), title })),
    )
    for (const [i, title] of PROSE.entries())
      expect(env(await tasks(box(), ['get', String(i + 1)])).data.title).toBe(title)
    const list = await tasks(box(), ['list', '--limit', '50'])
    expect(env(list).data.items.map((t: { title: string }) => t.title)).toEqual(PROSE)
    const stream = await tasks(box(), ['export'])
    const items = stream.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.type === 'item')
    expect(items.map((l: { data: { title: string } }) => l.data.title)).toEqual(PROSE)
    const text = await tasks(box(), ['export', '--format', 'text'], { env: { COLUMNS: '200' } })
    for (const title of PROSE) expect(text.stdout).toContain(title)
    const raw = await tasks(box(), ['export', '--format', 'raw'])
    for (const title of PROSE) expect(raw.stdout).toContain(title.includes(',') ? `"${title}"` : title)
    const human = await tasks(box(), ['list', '--format', 'text'], { env: { COLUMNS: '200' } })
    for (const title of PROSE) expect(human.stdout).toContain(title)
  })
})

describe('a secret passed in a sensitive flag never leaves the process', () => {
  it('JSON, text, thrown errors, error details: echoed under harmless keys, still redacted', async () => {
    const runs = await Promise.all([
      fixture(box(), ['leak', '--api-key', CANARY]),
      fixture(box(), ['leak', `--api-key=${CANARY}`, '--format', 'text']),
      fixture(box(), ['leak', '--api-key', CANARY, '--mode', 'error']),
      fixture(box(), ['leak', '--api-key', CANARY, '--mode', 'error', '--format', 'text']),
      fixture(box(), ['leak', '--api-key', CANARY, '--mode', 'throw']),
    ])
    expectClean(runs, CANARY)
    expect(env(runs[0]!).data).toEqual({
      echo: 'the key is <redacted>',
      prose: 'basic training plan',
      nested: { list: ['<redacted>', { note: '<redacted>' }] },
    })
    expect(env(runs[2]!).error).toMatchObject({ code: 'E_SERVER', details: { prose: 'basic training plan' } })
    expect(runs[3]!.stderr).toContain('error E_SERVER: upstream rejected <redacted>')
  })

  it('--format raw: bytes scrubbed, even with the secret split across two chunks', async () => {
    const run = await fixture(box(), ['leak', '--api-key', CANARY, '--mode', 'raw', '--format', 'raw'])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('id,note\n1,<redacted>\n2,basic training plan\n')
  })

  it('NDJSON streams: items, a failure line, and text rows', async () => {
    const runs = await Promise.all([
      fixture(box(), ['leak-stream', '--api-key', CANARY, '--n', '5']),
      fixture(box(), ['leak-stream', '--api-key', CANARY, '--fail-at', '2']),
      fixture(box(), ['leak-stream', '--api-key', CANARY, '--format', 'text'], { env: { COLUMNS: '200' } }),
      fixture(box(), ['leak-stream', '--api-key', CANARY, '--fail-at', '1', '--format', 'text']),
    ])
    expectClean(runs, CANARY)
    const lines = runs[0]!.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.slice(0, 5).map((l) => l.data.title)).toEqual([
      'basic training plan',
      'token economy review',
      'bearer bonds',
      'secret santa',
      'password reset',
    ])
    expect(lines[0].data.note).toBe('copy of <redacted>')
    expect(runs[1]!.code).toBe(1)
    expect(JSON.parse(runs[1]!.stdout.trim().split('\n').at(-1)!).error.message).toBe('stream broke near <redacted>')
    expect(runs[2]!.stdout).toMatch(/token economy review +copy of <redacted>/)
  })

  it('a bad value of a typed sensitive flag is not echoed (message, got), however short', async () => {
    for (const value of [CANARY, 'pw1']) {
      const run = await fixture(box(), ['leak', '--api-key', 'k', '--session-id', value])
      expect(run.code).toBe(2)
      expect(env(run).error.details.got).toBe('<redacted>')
      expect(env(run).error.message).not.toContain(value)
    }
  })
})

describe('an injected token is scrubbed from every format of the example tool', () => {
  it('NDJSON, text and raw CSV exports of a task whose title carries it', async () => {
    seed(box(), [
      { id: '1', title: `rotate ${CANARY} today` },
      { id: '2', title: 'basic training plan' },
    ])
    const extra = { env: { TASKS_TOKEN: CANARY } }
    const runs = await Promise.all([
      tasks(box(), ['export'], extra),
      tasks(box(), ['export', '--format', 'text'], extra),
      tasks(box(), ['export', '--format', 'raw'], extra),
      tasks(box(), ['get', '1', '--format', 'text'], extra),
    ])
    expectClean(runs, CANARY)
    expect(runs[2]!.stdout).toContain('1,rotate <redacted> today,')
    expect(runs[2]!.stdout).toContain('2,basic training plan,')
    expect(runs[0]!.stdout).toContain('"title":"rotate <redacted> today"')
  })
})

describe('an unknown flag written as --name=value never echoes the value', () => {
  it('not in the message, details.got or the suggestions; nor a separate value', async () => {
    const runs = await Promise.all([
      tasks(box(), ['list', `--api-key=${CANARY}`]),
      tasks(box(), ['list', `--password=${CANARY}`, '--format', 'text']),
      tasks(box(), ['list', `--passwd=${CANARY}`]),
      tasks(box(), ['list', '--password', CANARY]),
      tasks(box(), ['create', '--title', 'x', `--api-key=${CANARY}`, '--dry-run']),
      tasks(box(), ['export', `--token=${CANARY}`]),
    ])
    expectClean(runs, CANARY)
    const first = env(runs[0]!).error
    expect(first).toMatchObject({ code: 'E_USAGE', message: 'Unknown flag: --api-key.', details: { got: '--api-key' } })
    expect(first.details.suggestions).toEqual([])
    expect(env(runs[2]!).error.details.suggestions).toEqual([])
    expect(runs[5]!.stdout.trim().split('\n')).toHaveLength(1)
    expect(auditText(box())).not.toContain(CANARY)
  })
})

describe('context reports config keys of any style redacted', () => {
  it('camelCase, kebab-case, header-style keys; nested objects and arrays; prose values intact', async () => {
    const dir = join(box().env.XDG_CONFIG_HOME!, 'tasks')
    mkdirSync(dir, { recursive: true })
    const config = {
      api_url: 'https://tasks.example',
      accessToken: CANARY,
      'refresh-token': CANARY,
      clientSecret: { value: CANARY },
      dbPassword: [CANARY],
      'X-Api-Key': CANARY,
      'Set-Cookie': `sid=${CANARY}`,
      db_url: `postgres://ann:${CANARY}@db.example/x`,
      nested: { deep: [{ apiKey: CANARY }] },
      note: 'token economy review; basic training plan',
    }
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config))
    const runs = [await tasks(box(), ['context']), await tasks(box(), ['context', '--format', 'text'])]
    expectClean(runs, CANARY)
    expect(env(runs[0]!).data.config).toEqual({
      api_url: 'https://tasks.example',
      accessToken: '<redacted>',
      'refresh-token': '<redacted>',
      clientSecret: '<redacted>',
      dbPassword: '<redacted>',
      'X-Api-Key': '<redacted>',
      'Set-Cookie': '<redacted>',
      db_url: 'postgres://ann:<redacted>@db.example/x',
      nested: { deep: [{ apiKey: '<redacted>' }] },
      note: 'token economy review; basic training plan',
    })
  })
})

describe('secrets the tool learns from its stores and from upstreams', () => {
  let api: Upstream
  const UPSTREAM_SECRET = 'rt-upstream-0a1b2c3d4e5f'
  beforeAll(async () => {
    api = await startUpstream([
      http.get('*/v1/tasks', () => HttpResponse.json({ items: [], next_cursor: null })),
      http.post('*/oauth/token', async ({ request }) => {
        const body = (await request.json()) as { refresh_token?: string }
        if (body.refresh_token === 'rt_good')
          return HttpResponse.json({
            access_token: `${CANARY}-refreshed`,
            refresh_token: `${CANARY}-rt`,
            expires_in: 3600,
            account: 'ann',
          })
        return HttpResponse.json({ error: 'invalid_grant' }, { status: 400 })
      }),
    ])
  })
  afterAll(() => api.close())
  afterEach(() => api.reset())

  /** An upstream that echoes what it was sent, as JSON text, as JSON nested in a string, and as a form body. */
  function echoingMe(status: number) {
    api.use(
      http.get('*/v1/me', ({ request }) => {
        const auth = request.headers.get('authorization') ?? ''
        const token = auth.replace(/^Bearer /, '')
        return HttpResponse.text(
          JSON.stringify({
            error: `rejected ${auth}`,
            echoed: { header: auth },
            detail: JSON.stringify({ refresh_token: UPSTREAM_SECRET, hint: 'token economy' }),
            form: `grant_type=refresh_token&refresh_token=${UPSTREAM_SECRET}&access_token=${token}`,
          }),
          { status },
        )
      }),
    )
  }

  function run(b: Sandbox, args: string[], extra: Record<string, string> = {}) {
    return tasks(b, args, { env: { TASKS_API_URL: api.url, TASKS_HTTP_RETRIES: '0', ...extra } })
  }

  function storeLogin(b: Sandbox, record: { access_token: string; refresh_token: string; expires_at: string }) {
    const dir = join(b.env.XDG_CONFIG_HOME!, 'tasks')
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    writeFileSync(
      join(dir, 'credentials.json'),
      JSON.stringify({ version: 1, accounts: { ann: { account: 'ann', scopes: [], ...record } } }),
      { mode: 0o600 },
    )
    writeFileSync(join(dir, 'session.json'), JSON.stringify({ account: 'ann' }))
  }

  it('an injected token echoed in an upstream error body (plain, JSON text, nested JSON, form): json and text', async () => {
    echoingMe(500)
    const runs = [
      await run(box(), ['whoami'], { TASKS_TOKEN: CANARY }),
      await run(box(), ['whoami', '--format', 'text'], { TASKS_TOKEN: CANARY }),
    ]
    expectClean(runs, CANARY, UPSTREAM_SECRET)
    const body = JSON.parse(env(runs[0]!).error.details.upstream.body)
    expect(body.echoed.header).toBe('Bearer <redacted>')
    expect(JSON.parse(body.detail)).toEqual({ refresh_token: '<redacted>', hint: 'token economy' })
    expect(body.form).toBe('grant_type=refresh_token&refresh_token=<redacted>&access_token=<redacted>')
  })

  it('an injected token echoed encoded (base64, Basic user:token, percent, form, hex) or split over two fields', async () => {
    api.use(
      http.get('*/v1/me', ({ request }) => {
        const token = (request.headers.get('authorization') ?? '').replace(/^Bearer /, '')
        const half = Math.floor(token.length / 2)
        return HttpResponse.json(
          {
            error: 'invalid_token',
            seen_b64: Buffer.from(token).toString('base64'),
            seen_b64url: Buffer.from(token).toString('base64url'),
            seen_basic: `Basic ${Buffer.from(`ann:${token}`).toString('base64')}`,
            seen_blob: Buffer.from(`{"u":"ann","t":"${token}"}`).toString('base64'),
            callback: `https://api.example/cb?state=${encodeURIComponent(token)}`,
            form: new URLSearchParams({ seen: token }).toString(),
            seen_hex: Buffer.from(token).toString('hex'),
            token_part1: token.slice(0, half),
            token_part2: token.slice(half),
          },
          { status: 500 },
        )
      }),
    )
    // Every character an encoder treats specially: `+`, `/`, `=`, a space, `~`, `*`.
    const secret = `${CANARY}+/= ~*x`
    const runs = [
      await run(box(), ['whoami'], { TASKS_TOKEN: secret }),
      await run(box(), ['whoami', '--format', 'text'], { TASKS_TOKEN: secret }),
    ]
    // The body came back, redacted: its other members are intact.
    expect(JSON.parse(env(runs[0]!).error.details.upstream.body).error).toBe('invalid_token')
    const encoded = [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
      Buffer.from(`ann:${secret}`).toString('base64'),
      encodeURIComponent(secret),
      new URLSearchParams({ v: secret }).toString().slice(2),
      Buffer.from(secret).toString('hex'),
      secret.slice(0, Math.floor(secret.length / 2)),
      secret.slice(Math.floor(secret.length / 2)),
    ]
    expectClean(runs, ...encoded)
    // The blob holds the token at an offset: no more of its base64 than the unstable edge characters is left.
    const blob = Buffer.from(`{"u":"ann","t":"${secret}"}`).toString('base64')
    expectClean(runs, blob.slice(24, 44))
  })

  it('a token obtained by refresh with the file store, then echoed by the upstream', async () => {
    storeLogin(box(), {
      access_token: 'tk_old_expired_1',
      refresh_token: 'rt_good',
      expires_at: '2020-01-01T00:00:00Z',
    })
    echoingMe(403)
    const extra = { TASKS_CREDENTIAL_STORE: 'file' }
    const runs = [await run(box(), ['whoami'], extra), await run(box(), ['whoami', '--format', 'text'], extra)]
    expect(env(runs[0]!).error.code).toBe('E_FORBIDDEN')
    expectClean(runs, CANARY, UPSTREAM_SECRET)
    // The refreshed token was stored (so the second run read it from the file, and still did not print it).
    expect(readFileSync(join(box().env.XDG_CONFIG_HOME!, 'tasks', 'credentials.json'), 'utf8')).toContain(
      `${CANARY}-refreshed`,
    )
  })

  it('the audit log and the idempotency record at rest hold no registered secret', async () => {
    const title = `reminder: rotate ${CANARY}`
    const extra = { TASKS_TOKEN: CANARY }
    const dry = await run(box(), ['create', '--title', title, '--idempotency-key', 'k1', '--dry-run'], extra)
    const done = await run(
      box(),
      ['create', '--title', title, '--idempotency-key', 'k1', '--confirm', env(dry).data.confirm_token],
      extra,
    )
    expect(done.code).toBe(0)
    expect(env(done).data.title).toBe('reminder: rotate <redacted>')
    const sync = await run(box(), ['sync', '--dry-run', '--format', 'text'], extra)
    expectClean([dry, done, sync], CANARY)
    const data = join(box().env.XDG_DATA_HOME!, 'tasks')
    expect(auditText(box())).toContain('"mode":"confirm"')
    expect(auditText(box())).not.toContain(CANARY)
    expect(filesUnder(join(data, 'idempotency'))).toContain('reminder: rotate <redacted>')
    // The tool's own store keeps the user's data as written: redaction is for what leaves, not for the data.
    expect(readFileSync(join(data, 'tasks.json'), 'utf8')).toContain(title)
  })
})
