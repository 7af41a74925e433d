/**
 * The author's guide cannot drift: the guide's tool starts as `agentcli init mytool` writes it, and every fence
 * marked `init=<path>` must be that file exactly; every file sample (a fence with `file=<path>`) is then written
 * over it, the tool (importing agentcli from this repository's build) is type-checked with tsc and built with
 * agentcli-build; every `sh check` fence is run through that tool's real bin, in order; the tool's own tests (from
 * the testing chapter) run with `node --test` as its `npm test` runs them, and `agentcli verify` passes on it. A
 * mock of the notes service on loopback answers the chapters' upstream commands (verify's included) and the device
 * login of the credentials chapter.
 */

import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { runTool, type Sandbox, sandbox } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Ref } from '../../../src/verify/reference-types.js'
import { undrawnCommands } from '../../support/fuzz-cover.js'
import { ROOT } from '../../support/helpers.js'

const GUIDE = join(ROOT, 'docs/guide')

type Fence = { chapter: string; line: number; info: string; body: string }

function fences(): Fence[] {
  const out: Fence[] = []
  for (const chapter of readdirSync(GUIDE)
    .filter((f) => f.endsWith('.md'))
    .sort()) {
    const lines = readFileSync(join(GUIDE, chapter), 'utf8').split('\n')
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\S.*)?$/.exec(lines[i]!)
      if (!open) continue
      const start = i
      const body: string[] = []
      while (++i < lines.length && lines[i] !== '```') body.push(lines[i]!)
      out.push({ chapter, line: start + 1, info: open[1] ?? '', body: `${body.join('\n')}\n` })
    }
  }
  return out
}

const fileOf = (f: Fence) => /(?:^|\s)file=(\S+)/.exec(f.info)?.[1]
const initOf = (f: Fence) => /(?:^|\s)init=(\S+)/.exec(f.info)?.[1]
const isCheck = (f: Fence) => /^(sh|console) check\b/.test(f.info)

/** One command line of a `sh check` fence: `$ [VAR=value …] mytool args… [# exit N [E_CODE [reason]]]`. */
type Step = {
  where: string
  env: Record<string, string>
  args: string[]
  exit: number
  code?: string
  reason?: string
  text: string
}

function words(line: string): string[] {
  const out: string[] = []
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? m[2] ?? m[3]!)
  return out
}

function steps(f: Fence): Step[] {
  const out: Step[] = []
  f.body.split('\n').forEach((raw, i) => {
    if (!raw.startsWith('$ ')) return
    const [command = '', comment = ''] = raw.slice(2).split(/\s+#\s+/)
    const exit = Number(/exit (\d+)/.exec(comment)?.[1] ?? 0)
    const [, code, reason] = /\b(E_[A-Z_]+)(?: ([a-z_]+))?/.exec(comment) ?? []
    const all = words(command)
    const env: Record<string, string> = {}
    while (all[0]?.includes('=')) {
      const [k, ...v] = all.shift()!.split('=')
      env[k!] = v.join('=')
    }
    expect(all.shift(), `${f.chapter}:${f.line + i + 1} runs mytool`).toBe('mytool')
    out.push({
      where: `${f.chapter}:${f.line + i + 1}`,
      env,
      args: all,
      exit,
      ...(code ? { code } : {}),
      ...(reason ? { reason } : {}),
      text: raw,
    })
  })
  return out
}

/** Values a later step may name as `<confirm_token>`, `<job_id>`…: the last seen in any envelope or stream line. */
function harvest(stdout: string, into: Map<string, string>): void {
  const visit = (value: unknown) => {
    if (!value || typeof value !== 'object') return
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'string' && /^(confirm_token|job_id|checkpoint_id|next_cursor|id)$/.test(k)) into.set(k, v)
      else visit(v)
    }
  }
  for (const line of stdout.split('\n'))
    try {
      visit(JSON.parse(line))
    } catch {}
  try {
    visit(JSON.parse(stdout))
  } catch {}
}

function link(tool: string, name: string, target: string) {
  mkdirSync(dirname(join(tool, 'node_modules', name)), { recursive: true })
  symlinkSync(target, join(tool, 'node_modules', name), 'dir')
}

/** Three events of the upstream-cursor chapter's feed, newest first. */
const EVENTS = [3, 2, 1].map((n) => ({
  id: `ev${n}`,
  note_id: String(n),
  action: 'created',
  at: `2026-11-0${n}T00:00:00.000Z`,
}))

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/**
 * What the mock's device flow did: the user code of each device code it issued and how often that was polled, the
 * user codes in the order issued, the access tokens it minted, and the bearer token of each `/v1/issues` request.
 */
const device = {
  grants: new Map<string, { user_code: string; polls: number }>(),
  issued: [] as string[],
  tokens: [] as string[],
  bearers: [] as (string | undefined)[],
}

/**
 * The device flow of the credentials chapter's login (RFC 8628 shapes, for the client `mytool`). It plays the
 * person too: a device code's first poll is `authorization_pending`, the next one gets a token (the person
 * approved in between); a device code is exchanged once.
 */
function oauth(path: string, raw: string, res: ServerResponse) {
  const body = JSON.parse(raw || '{}') as { client_id?: string; grant_type?: string; device_code?: string }
  const refuse = (error: string) => {
    res.statusCode = 400
    res.end(JSON.stringify({ error }))
  }
  if (body.client_id !== 'mytool') return refuse('invalid_client')
  if (path === '/oauth/device/code') {
    const n = device.issued.length + 1
    const code = { device_code: `dc_${n}_${randomBytes(8).toString('hex')}`, user_code: `WDJB-${1000 + n}` }
    device.grants.set(code.device_code, { user_code: code.user_code, polls: 0 })
    device.issued.push(code.user_code)
    res.end(
      JSON.stringify({ ...code, verification_uri: 'https://notes.example.com/device', expires_in: 900, interval: 5 }),
    )
  } else if (path === '/oauth/token') {
    if (body.grant_type !== DEVICE_GRANT) return refuse('unsupported_grant_type')
    const grant = device.grants.get(body.device_code ?? '')
    if (!grant) return refuse('invalid_grant')
    if (++grant.polls === 1) return refuse('authorization_pending')
    device.grants.delete(body.device_code ?? '')
    const token = `at_${randomBytes(12).toString('hex')}`
    device.tokens.push(token)
    res.end(
      JSON.stringify({
        access_token: token,
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: `rt_${randomBytes(12).toString('hex')}`,
        scope: 'notes:read notes:write',
        account: 'ada@example.com',
      }),
    )
  } else {
    res.statusCode = 404
    res.end('{}')
  }
}

/**
 * The mock upstream of the credentials chapter (`GET /v1/issues`, and the device login under `/oauth/`) and of the
 * upstream-cursor chapter (`GET /v1/activity`, paginated by an opaque `page_token` honoured once), for the bearer
 * token `t0ken` or one its device login minted.
 */
function upstream(): Promise<Server> {
  const tokens = new Map<string, number>()
  let minted = 0
  const server = createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      raw += chunk
    })
    req.on('end', () => answer(req, res, raw))
  })
  const answer = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    res.setHeader('content-type', 'application/json')
    const url = new URL(req.url ?? '/', 'http://upstream')
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    if (url.pathname.startsWith('/oauth/')) {
      oauth(url.pathname, raw, res)
    } else if (bearer !== 't0ken' && !device.tokens.includes(bearer ?? '')) {
      res.statusCode = 401
      res.end(JSON.stringify({ message: 'bad token' }))
    } else if (url.pathname === '/v1/issues') {
      device.bearers.push(bearer)
      res.end(JSON.stringify([{ id: 7, title: 'Crash on start', state: 'open' }]))
    } else if (url.pathname === '/v1/activity') {
      const token = url.searchParams.get('page_token')
      const from = token === null ? 0 : tokens.get(token)
      if (from === undefined) {
        res.statusCode = 410
        res.end(JSON.stringify({ message: 'page token expired' }))
        return
      }
      if (token !== null) tokens.delete(token)
      const to = from + Number(url.searchParams.get('page_size'))
      let next: string | null = null
      if (to < EVENTS.length) {
        next = `pt_${++minted}`
        tokens.set(next, to)
      }
      res.end(JSON.stringify({ events: EVENTS.slice(from, to), next_page_token: next }))
    } else {
      res.statusCode = 404
      res.end('{}')
    }
  }
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

const all = fences()
let tool = ''
let box: Sandbox
let server: Server
let apiUrl = ''
/** What `init` wrote at each path an `init=` fence shows, read before the guide's files go over the tool. */
const written = new Map<string, string>()

beforeAll(async () => {
  tool = join(mkdtempSync(join(tmpdir(), 'agentcli-guide-')), 'mytool')
  box = sandbox('agentcli-guide-home-')
  server = await upstream()
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // The project as `init` writes it; the guide's files go over it.
  const init = spawnSync(process.execPath, [join(ROOT, 'bin/agentcli.js'), 'init', tool], {
    encoding: 'utf8',
    env: { ...process.env, ...box.env },
  })
  expect(init.status, init.stdout + init.stderr).toBe(0)
  for (const f of all) {
    const path = initOf(f)
    if (path) written.set(path, readFileSync(join(tool, path), 'utf8'))
  }
  // What the guide tells the author to run on init's project before the chapters (`sh setup` fences).
  for (const f of all.filter((f) => /^sh setup\b/.test(f.info))) {
    const setup = spawnSync('sh', ['-ec', f.body], { cwd: tool, encoding: 'utf8' })
    expect(setup.status, `${f.chapter}:${f.line}\n${setup.stderr}`).toBe(0)
  }
  link(tool, 'agentcli', ROOT)
  // What npm install would put into the tool's node_modules: agentcli's own dependencies (the bundle leaves them
  // outside and loads them from there) and the tool's devDependencies the test uses.
  const framework = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: object }
  for (const dep of [...Object.keys(framework.dependencies), '@types/node', 'typescript'])
    link(tool, dep, join(ROOT, 'node_modules', dep))
  for (const f of all) {
    const path = fileOf(f)
    if (!path) continue
    mkdirSync(dirname(join(tool, path)), { recursive: true })
    writeFileSync(join(tool, path), f.body)
  }
})

afterAll(() => {
  server?.close()
  box?.cleanup()
  if (tool) rmSync(dirname(tool), { recursive: true, force: true })
})

describe('docs/guide', () => {
  it('every TypeScript sample is a file of the guide tool (none is left unchecked)', () => {
    const loose = all.filter((f) => /^(ts|typescript|js|javascript|mjs)\b/.test(f.info) && !fileOf(f) && !initOf(f))
    expect(loose.map((f) => `${f.chapter}:${f.line}`)).toEqual([])
    expect(all.filter(fileOf).length).toBeGreaterThan(10)
    expect(all.filter(isCheck).length).toBeGreaterThan(5)
    const index = readFileSync(join(GUIDE, 'README.md'), 'utf8')
    const chapters = readdirSync(GUIDE).filter((f) => /^\d\d-.*\.md$/.test(f))
    expect([...index.matchAll(/\]\((\d\d-[\w-]+\.md)\)/g)].map((m) => m[1])).toEqual(chapters.sort())
  })

  it("shows init's files exactly as init writes them (the guide's tool starts from them)", () => {
    const shown = all.filter(initOf)
    expect(shown.map(initOf)).toEqual(
      expect.arrayContaining([
        'package.json',
        'tsconfig.json',
        'bin/run.js',
        'src/index.ts',
        '.github/workflows/ci.yml',
      ]),
    )
    for (const f of shown) expect(f.body, `${f.chapter}:${f.line} ${initOf(f)}`).toBe(written.get(initOf(f)!))
    // The guide's own version of a file init wrote replaces it whole; these are not among them.
    for (const f of all.filter(fileOf))
      expect(['package.json', 'tsconfig.json', 'bin/run.js'], `${f.chapter}:${f.line}`).not.toContain(fileOf(f))
  })

  it('the tool type-checks under strict settings and builds', () => {
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', tool], {
      encoding: 'utf8',
    })
    expect(tsc.stdout + tsc.stderr, 'tsc').toBe('')
    expect(tsc.status).toBe(0)
    const build = spawnSync(process.execPath, [join(ROOT, 'bin/agentcli-build.js'), '--skill', 'write', tool], {
      encoding: 'utf8',
    })
    expect(build.status, build.stderr).toBe(0)
  }, 120_000)

  it('every `sh check` command runs through the real bin with the exit code the guide shows', async () => {
    const values = new Map<string, string>()
    for (const fence of all.filter(isCheck)) {
      for (const step of steps(fence)) {
        const args = step.args.map((a) =>
          a.replace(/<(\w+)>/g, (whole, name: string) => {
            const value = values.get(name)
            expect(value, `${step.where}: no ${whole} seen yet`).toBeDefined()
            return value!
          }),
        )
        const run = await runTool(join(tool, 'bin/run.js'), args, {
          env: { ...box.env, MYTOOL_API_URL: apiUrl, ...step.env },
        })
        expect(run.code, `${step.where}: ${step.text}\n${run.stdout}\n${run.stderr}`).toBe(step.exit)
        if (!args.includes('text') && !args.includes('raw') && !args.includes('export')) {
          const envelope = run.json as
            | { ok?: boolean; error?: { code: string; details: { reason?: string } } }
            | undefined
          expect(envelope?.ok, `${step.where}: one envelope\n${run.stdout}`).toBe(step.exit === 0)
          if (step.code) expect(envelope?.error?.code, step.where).toBe(step.code)
          if (step.reason) expect(envelope?.error?.details.reason, step.where).toBe(step.reason)
        }
        harvest(run.stdout, values)
      }
    }
  }, 240_000)

  it("the credentials chapter's device login, end to end: the code the service issued is relayed, resume stores the token, issues sends it", async () => {
    const home = sandbox('agentcli-guide-login-')
    type Envelope = {
      data: Record<string, unknown>
      error: { code: string; details: { checkpoint_id: string; resume: string; approval: Record<string, string> } }
    }
    // The keychain is not what this checks (nor is one running here): the store the chapter's lines force.
    const mytool = async (args: string[]) => {
      const run = await runTool(join(tool, 'bin/run.js'), args, {
        env: { ...home.env, MYTOOL_API_URL: apiUrl, MYTOOL_CREDENTIAL_STORE: 'file' },
      })
      return { ...run, envelope: run.json as Envelope }
    }
    try {
      const login = await mytool(['login'])
      expect(login.code, login.stdout).toBe(9)
      const { checkpoint_id: id, resume, approval } = login.envelope.error.details
      const userCode = device.issued.at(-1)!
      expect(approval).toMatchObject({ verification_uri: 'https://notes.example.com/device', user_code: userCode })
      expect(approval.instructions).toContain(userCode)
      // Runnable as printed: `mytool …` on PATH, `node …/bin/run.js …` here.
      expect(resume).toMatch(new RegExp(`(^mytool|bin/run\\.js) login resume --id ${id}$`))

      // Polled before the person approved: the same checkpoint and approval again, nothing stored.
      const pending = await mytool(['login', 'resume', '--id', id])
      expect(pending.code, pending.stdout).toBe(9)
      expect(pending.envelope.error.details).toMatchObject({ checkpoint_id: id, resume, approval })
      const credentials = join(home.root, 'config/mytool/credentials.json')
      await expect(stat(credentials)).rejects.toThrow(/ENOENT/)

      const done = await mytool(['login', 'resume', '--id', id])
      expect(done.code, done.stdout + done.stderr).toBe(0)
      expect(done.envelope.data).toEqual({ account: 'ada@example.com', logged_in: true, source: 'file' })
      const token = device.tokens.at(-1)!
      expect((await stat(credentials)).mode & 0o777).toBe(0o600)
      const stored = (
        JSON.parse(readFileSync(credentials, 'utf8')) as { accounts: Record<string, Record<string, unknown>> }
      ).accounts['ada@example.com']!
      expect(stored).toMatchObject({
        account: 'ada@example.com',
        access_token: token,
        refresh_token: expect.stringMatching(/^rt_/),
        scopes: ['notes:read', 'notes:write'],
      })
      const lifetime = Date.parse(String(stored.expires_at)) - Date.now()
      expect(lifetime).toBeGreaterThan(3_000_000)
      expect(lifetime).toBeLessThanOrEqual(3_600_000)

      const before = device.bearers.length
      const issues = await mytool(['issues'])
      expect(issues.code, issues.stdout).toBe(0)
      expect(device.bearers.slice(before)).toEqual([token])
      for (const run of [login, pending, done, issues]) expect(run.stdout + run.stderr).not.toContain(token)
    } finally {
      home.cleanup()
    }
  }, 120_000)

  it("the tool's own tests pass with node --test, as its npm test runs them (runTool, sandbox, fccGuard)", () => {
    const test = spawnSync(process.execPath, ['--test'], {
      cwd: tool,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', NODE_OPTIONS: '' },
      timeout: 180_000,
    })
    expect(test.status, test.stdout + test.stderr).toBe(0)
    expect(test.stdout).toMatch(/# pass [1-9]\d*\b|ℹ pass [1-9]\d*\b/)
    expect(test.stdout).toMatch(/fail 0\b/)
  }, 200_000)

  it('agentcli verify passes on the tool, its upstream commands checked against the mock', async () => {
    // The fuzz: of seeds 1 to 2,000, the one whose invocations draw every command of the guide's tool soonest (44
    // calls; seed 1, which the tool's own CI runs 500 of, takes 62), so each of the chapters' commands gets fuzzed
    // input. A command a chapter adds that these do not reach fails here: raise the count or pick another seed.
    const [fuzz, seed] = [44, 1898]
    const reference = await runTool(join(tool, 'bin/run.js'), ['reference'], { env: box.env })
    expect(undrawnCommands((reference.json as { data: Ref }).data, fuzz, seed)).toEqual([])
    // As chapter 7 shows it: the mock allowed on loopback, its URL and a token passed in. Not spawnSync: the mock
    // answers from this process, so its event loop must keep running while verify does.
    const verify = await runTool(
      join(ROOT, 'bin/agentcli.js'),
      [
        'verify',
        '--fuzz',
        String(fuzz),
        '--seed',
        String(seed),
        '--allow-upstream',
        apiUrl,
        '--env',
        `MYTOOL_API_URL=${apiUrl}`,
        '--env',
        'MYTOOL_TOKEN=t0ken',
        '--',
        process.execPath,
        join(tool, 'bin/run.js'),
      ],
      { timeoutMs: 300_000 },
    )
    type Check = { id: string; status: string; evidence: string }
    const report = verify.json as { data?: { checks: Check[] }; error?: { details?: { checks?: Check[] } } }
    const checks = report.data?.checks ?? report.error?.details?.checks ?? []
    expect(checks.filter((c) => c.status === 'fail')).toEqual([])
    expect(verify.code, `${JSON.stringify(report.error)?.slice(0, 2000)} ${verify.stderr.slice(0, 2000)}`).toBe(0)
    // Reached and checked, not skipped for want of an upstream.
    for (const id of ['self.output_valid:issues', 'self.output_valid:feed'])
      expect(
        checks.find((c) => c.id === id),
        id,
      ).toMatchObject({ status: 'pass' })
  }, 320_000)
})
