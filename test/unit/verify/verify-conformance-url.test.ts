import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { conformanceOptions } from '../../../src/verify/conformance-options.js'
import { ROOT, TASKS_BIN } from '../../support/helpers.js'
import { runInProcess } from '../../support/in-process.js'

// `agentcli verify --mcp --conformance --url`: every misuse refused before anything runs, the whole command
// in-process (nothing here reaches the suite). The suite's runs against a URL: test/cli/verify/verify-conformance-url.test.ts.

const dir = mkdtempSync(join(tmpdir(), 'agentcli-conf-url-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A port nothing listens on: one a server just let go. */
async function deadUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((settle) => server.listen(0, '127.0.0.1', settle))
  const { port } = server.address() as AddressInfo
  await new Promise((settle) => server.close(settle))
  return `http://127.0.0.1:${port}/mcp`
}

const URL_FLAGS = ['--mcp', '--conformance', '--url', 'http://127.0.0.1:3000/mcp']
const verify = (args: string[]) => runInProcess(ROOT, ['verify', ...args])
// biome-ignore lint/suspicious/noExplicitAny: the envelope is read loosely
const errorOf = (run: { json: unknown }): any => (run.json as any)?.error

describe('agentcli verify --url: the flags', () => {
  it('neither --url nor a command: the command is a required argument, as reference declares it', async () => {
    const run = await verify(['--mcp', '--conformance'])
    expect(run.code, run.stdout).toBe(2)
    expect(errorOf(run)).toMatchObject({
      code: 'E_USAGE',
      message: 'Missing required argument: command',
      details: { missing: ['command'] },
    })
  })

  it.each([
    ['--url without --mcp --conformance', ['--url', 'http://127.0.0.1:3000/mcp'], /--url belongs to the official MCP/],
    ['--baseline without --conformance', ['--baseline', 'b.json', '--', 'tasks'], /--baseline belongs/],
    ['--revision without --conformance', ['--mcp', '--revision', '2025-11-25', '--', 'tasks'], /--revision belongs/],
    ['--url and a command', [...URL_FLAGS, '--', 'node', 'x.js'], /--url and a command after -- name two servers/],
    ['--url with --fuzz', [...URL_FLAGS, '--fuzz', '3'], /--fuzz needs a command/],
    [
      '--url with --setup, --env, --release',
      [...URL_FLAGS, '--setup', 'x', '--env', 'A=1', '--release'],
      /--setup, --env, --release need a command/,
    ],
  ])('%s: E_USAGE naming it and what is allowed', async (_, args, message) => {
    const run = await verify(args)
    expect(run.code, run.stdout).toBe(2)
    const error = errorOf(run)
    expect(error.code).toBe('E_USAGE')
    expect(error.message).toMatch(message)
    expect(error.details.allowed ?? error.details.fix).toBeTruthy()
  })

  it('a command-only flag with --url lists the flags a --url run takes', async () => {
    const error = errorOf(await verify([...URL_FLAGS, '--seed', '4']))
    expect(error.details).toMatchObject({ param: '--url', got: ['--seed'] })
    expect(error.details.allowed).toEqual(expect.arrayContaining(['--url', '--baseline', '--revision', '--junit']))
  })

  it.each([
    ['ftp://127.0.0.1/mcp', /ftp: is not an MCP transport/, 'ftp:'],
    ['file:///etc/passwd', /file: is not an MCP transport/, 'file:'],
    ['127.0.0.1:3000/mcp', /is not an MCP transport|not a URL/, undefined],
    ['not a url', /not a URL/, 'not a url'],
  ])('--url %s: E_VALIDATION, http(s) allowed', async (url, message, got) => {
    const run = await verify(['--mcp', '--conformance', '--url', url])
    expect(run.code, run.stdout).toBe(2)
    expect(errorOf(run)).toMatchObject({ code: 'E_VALIDATION', details: { param: '--url', allowed: /http:\/\// } })
    expect(errorOf(run).message).toMatch(message)
    if (got) expect(errorOf(run).details.got).toBe(got)
  })

  it('a URL with a password: E_VALIDATION, the password never shown', async () => {
    const run = await verify(['--mcp', '--conformance', '--url', 'http://me:hunter2-secret@127.0.0.1:3000/mcp'])
    expect(run.code, run.stdout).toBe(2)
    expect(errorOf(run)).toMatchObject({ code: 'E_VALIDATION', details: { param: '--url' } })
    expect(errorOf(run).message).toMatch(/credentials/)
    expect(run.stdout + run.stderr).not.toContain('hunter2-secret')
  })

  it('a string that is no URL but holds user:password@ (no scheme): E_VALIDATION, the password never shown', async () => {
    const run = await verify(['--mcp', '--conformance', '--url', '//bob:hunter2secret@127.0.0.1:3000/mcp'])
    expect(run.code, run.stdout).toBe(2)
    expect(errorOf(run)).toMatchObject({
      code: 'E_VALIDATION',
      details: { param: '--url', got: '…@127.0.0.1:3000/mcp' },
    })
    expect(run.stdout + run.stderr).not.toContain('hunter2secret')
  })

  it('--revision outside the two: E_VALIDATION with the revisions allowed', async () => {
    const run = await verify([...URL_FLAGS, '--revision', '2024-11-05'])
    expect(errorOf(run)).toMatchObject({
      code: 'E_VALIDATION',
      details: { param: '--revision', allowed: ['2025-11-25', '2026-07-28'], got: '2024-11-05' },
    })
  })
})

describe('agentcli verify --baseline: the file', () => {
  const file = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }

  it('one that cannot be read: E_USAGE naming the path and the shape wanted', async () => {
    const missing = join(dir, 'missing.json')
    const run = await verify([...URL_FLAGS, '--baseline', missing])
    expect(run.code, run.stdout).toBe(2)
    expect(errorOf(run)).toMatchObject({
      code: 'E_USAGE',
      details: { param: '--baseline', path: missing, got: 'ENOENT', fix: /keyed by revision/ },
    })
  })

  it.each([
    ['not JSON', '{"2025-11-25": ', /not JSON/, 'not JSON'],
    ['an array', '["prompts-list"]', /not a JSON object/, 'array'],
    ['a flat map', '{"prompts-list": "no prompts"}', /'prompts-list' is not a revision/, 'prompts-list'],
    ['a revision not an object', '{"2025-11-25": ["prompts-list"]}', /'2025-11-25' is not an object/, 'object'],
    ['an entry without a reason', '{"2025-11-25": {"prompts-list": ""}}', /has no reason/, ''],
  ])('%s: E_VALIDATION naming what is wrong and the shape allowed', async (name, text, message, got) => {
    const run = await verify([...URL_FLAGS, '--baseline', file(`${name}.json`, text)])
    expect(run.code, run.stdout).toBe(2)
    expect(errorOf(run)).toMatchObject({ code: 'E_VALIDATION', details: { param: '--baseline', got } })
    expect(errorOf(run).message).toMatch(message)
    expect(errorOf(run).details.allowed).toBeTruthy()
  })

  it('is read before anything runs with a command too (it replaces agentcli’s own baseline)', async () => {
    const run = await verify([
      '--mcp',
      '--conformance',
      '--baseline',
      file('bad.json', '[]'),
      '--',
      process.execPath,
      TASKS_BIN,
    ])
    expect(run.code, run.stdout).toBe(2)
    expect(errorOf(run)).toMatchObject({ code: 'E_VALIDATION', details: { param: '--baseline' } })
  })
})

describe('agentcli verify --url: a URL where no MCP server answers', () => {
  it('fails mcp.conformance.server with the reason, and runs no scenario', async () => {
    const url = await deadUrl()
    const run = await verify(['--mcp', '--conformance', '--url', url, '--timeout-ms', '5000'])
    expect(run.code, run.stdout).toBe(1)
    const error = errorOf(run)
    expect(error.code).toBe('E_CONFORMANCE')
    expect(error.details).toMatchObject({ target: url, tool: null, version: null, release_level: null, fuzz: null })
    expect(error.details.checks).toEqual([
      expect.objectContaining({ id: 'mcp.reference', status: 'skip', evidence: expect.stringMatching(/--url/) }),
      expect.objectContaining({
        id: 'mcp.conformance.server',
        status: 'fail',
        evidence: `nothing answers at ${url}: ECONNREFUSED`,
      }),
    ])
  })
})

describe('conformanceOptions', () => {
  it('a command: both revisions against agentcli’s own baseline', () => {
    const o = conformanceOptions({}, false)
    expect(o.revisions).toEqual(['2025-11-25', '2026-07-28'])
    expect(o.baselineSource).toMatch(/^agentcli’s own \(suite .*\): 2025-11-25: \d+ expected failures, 2026-07-28: \d+/)
  })

  it('a URL: no baseline at all, and it says so', () => {
    const o = conformanceOptions({ revision: '2026-07-28' }, true)
    expect(o).toMatchObject({ revisions: ['2026-07-28'], baseline: {} })
    expect(o.baselineSource).toMatch(/^no --baseline: every failing scenario fails/)
  })

  it('a file: its entries, the revisions it names but that are not run said so', () => {
    const path = join(dir, 'two.json')
    writeFileSync(path, JSON.stringify({ '2025-11-25': { a: 'needs x' }, '2026-07-28': { b: 'y', c: 'z' } }))
    const o = conformanceOptions({ revision: '2025-11-25', baseline: path }, true)
    expect(o.baseline['2025-11-25']).toEqual({ a: 'needs x' })
    expect(o.baselineSource).toBe(`--baseline ${path}: 2025-11-25: 1 expected failure (2026-07-28 not run)`)
  })
})
