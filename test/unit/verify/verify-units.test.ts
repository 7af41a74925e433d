import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { WAIT_FLAGS } from '../../../src/jobs/wait-flags.js'
import { twoAtATime } from '../../../src/verify/_private.js'
import { type Call, target } from '../../../src/verify/call.js'
import { junit, sarif } from '../../../src/verify/ci-report.js'
import { decorationCheck } from '../../../src/verify/decoration.js'
import {
  exampleArgv,
  fill,
  harvest,
  NOT_PLAIN_FLAGS,
  runnableExample,
  type Seen,
} from '../../../src/verify/examples.js'
import type { RefCommand } from '../../../src/verify/reference-types.js'
import { Report } from '../../../src/verify/report.js'
import {
  NET_CUT,
  requireOption,
  SANDBOX_NODE_OPTIONS,
  sandboxEnv,
  sandboxSettings,
} from '../../../src/verify/settings.js'
import { WRITE_FLAGS } from '../../../src/write/flags.js'

describe('verify: examples become argv', () => {
  it('keeps <placeholders> as words (not shell redirections) and stops at a real redirection', () => {
    expect(exampleArgv('tasks get <id> --fields title', 'tasks')).toEqual(['get', '<id>', '--fields', 'title'])
    expect(exampleArgv('tasks edit 1 --confirm <confirm_token>', 'tasks')).toEqual([
      'edit',
      '1',
      '--confirm',
      '<confirm_token>',
    ])
    expect(exampleArgv('tasks export --format raw > tasks.csv', 'tasks')).toEqual(['export', '--format', 'raw'])
    expect(exampleArgv('create --title "Write the docs"', 'tasks')).toEqual(['create', '--title', 'Write the docs'])
  })

  it('fills placeholders from seen output, `<x_id>` from an `id`, and refuses what it cannot fill', () => {
    const seen: Seen = new Map()
    harvest({ items: [{ id: '7', title: 'a' }], next_cursor: 'c1', count: 1 }, seen)
    expect(fill(['get', '<id>'], seen)).toEqual(['get', '7'])
    expect(fill(['get', '<task_id>'], seen)).toEqual(['get', '7'])
    expect(fill(['list', '--cursor', '<next_cursor>'], seen)).toEqual(['list', '--cursor', 'c1'])
    expect(fill(['job', 'status', '--id', '<job>'], seen)).toBeUndefined()
  })

  it('picks the first example that runs the command itself, unshaped', () => {
    const command = {
      path: 'get',
      examples: ['t get <id> --fields title', 't get <id>', 't get 1'],
    } as unknown as RefCommand
    expect(runnableExample(command, 't', new Map())).toEqual(['get', '1'])
    expect(runnableExample(command, 't', new Map([['id', '3']]))).toEqual(['get', '3'])
  })

  it('skips the universal flags that take a value, written `--x v` or `--x=v`, and the write and wait flags; runs the switches', () => {
    const first = (...examples: string[]) =>
      runnableExample({ path: 'get', examples } as unknown as RefCommand, 't', new Map())
    for (const shaped of ['--format text', '--format=text', '--format json', '--fields a', '--fields=a,b'])
      expect(first(`t get 1 ${shaped}`, 't get 2')).toEqual(['get', '2'])
    for (const held of ['--dry-run', '--confirm tok', '--confirm=tok', '--wait', '--follow', '--watch'])
      expect(first(`t get 1 ${held}`, 't get 2')).toEqual(['get', '2'])
    for (const plain of ['--json', '--compact', '--pretty', '--quiet', '--no-input', '--wait-timeout 5', '--title a=b'])
      expect(first(`t get 1 ${plain}`, 't get 2')).toEqual(['get', '1', ...plain.split(' ')])
    // The framework's write flags and --wait are among them (a new one is a decision for verify).
    expect([...Object.keys(WRITE_FLAGS), 'wait'].map((f) => `--${f}`).filter((f) => !NOT_PLAIN_FLAGS.has(f))).toEqual(
      [],
    )
    expect(Object.keys(WAIT_FLAGS)).toContain('wait')
  })
})

describe('verify: CI reports', () => {
  const input = {
    target: 'node t.js',
    tool: 't',
    version: '1.0.0',
    checks: [
      { id: 'flags.help', group: 'flags' as const, status: 'pass' as const, evidence: '--help exits 0' },
      { id: 'lists.bounded:list', group: 'lists' as const, status: 'fail' as const, evidence: 'a <b> & "c"\u0001' },
      { id: 'write.no_token:sync', group: 'write' as const, status: 'skip' as const, evidence: 'needs login' },
    ],
  }

  it('JUnit escapes what XML cannot hold raw and counts per suite', () => {
    const xml = junit(input)
    expect(xml).toContain('<testsuites name="agentcli verify t" tests="3" failures="1" errors="0" skipped="1">')
    expect(xml).toContain('failure message="a &lt;b&gt; &amp; &quot;c&quot;"')
    expect(xml).not.toContain('\u0001')
    expect(xml).toContain('<skipped message="needs login"/>')
  })

  it('SARIF has one result per failure, on its rule', () => {
    const doc = JSON.parse(sarif(input, '0.1.0'))
    expect(doc.runs[0].results).toHaveLength(1)
    expect(doc.runs[0].results[0]).toMatchObject({ ruleId: 'lists.bounded', level: 'error' })
    expect(doc.runs[0].tool.driver.rules.map((r: { id: string }) => r.id)).toEqual([
      'flags.help',
      'lists.bounded',
      'write.no_token',
    ]) // Every rule carries a full description and help (code-scanning UIs show both).
    for (const rule of doc.runs[0].tool.driver.rules as Array<Record<string, { text: string }>>) {
      expect(rule.fullDescription?.text.length).toBeGreaterThan(10)
      expect(rule.help?.text.length).toBeGreaterThan(10)
    }
    const lists = doc.runs[0].tool.driver.rules.find((r: { id: string }) => r.id === 'lists.bounded')
    expect(lists.fullDescription.text).toContain('bounded')
  })
})

describe('verify: envelope.no_decoration', () => {
  const call = (label: string, stdout: string): Call => ({
    label,
    args: [label],
    code: 0,
    stdout,
    stderr: '',
    timedOut: false,
    ms: 1,
  })
  const check = (...calls: Call[]) => {
    const report = new Report()
    decorationCheck(calls, report)
    return report.checks[0]!
  }
  const failure = (message: string, details: Record<string, unknown> = {}) =>
    JSON.stringify({ ok: false, schema_version: '1.0', error: { code: 'E_USAGE', message, details, retryable: false } })

  it("passes plain prose, and decoration in data (the user's), in non-JSON output or outside the prose members", () => {
    const ok = check(
      call('plain', failure('no task 9 → run list', { hint: 'run `tasks list`', got: '🚀' })),
      call('echo', failure('task 🦄 not found', { id: '🦄' })),
      call('data', JSON.stringify({ ok: true, data: { title: '🚀 \u001b[1mlaunch' }, meta: { duration_ms: 1 } })),
      call('text', 'not json 🚀\n'),
      call('array', '[1,2]\n'),
    )
    expect(ok.status).toBe('pass')
    expect(ok.evidence).toMatch(/^5 calls, no ANSI escape/)
  })

  it('fails ANSI or emoji in a message, hint or fix, in an indented envelope, an NDJSON error line or a notice', () => {
    const pretty = JSON.stringify(JSON.parse(failure('plain', { fix: '🔧 run x' })), null, 2)
    const ndjson = `{"ok":true,"type":"item","data":{}}\n${failure('\u001b[31mbroke\u001b[0m')}\n`
    const notice = JSON.stringify({ ok: true, data: {}, meta: { notices: [{ type: 'x', message: '⚠️ old' }, 'odd'] } })
    const bad = check(call('pretty', pretty), call('stream', ndjson), call('notice', notice))
    expect(bad.status).toBe('fail')
    expect(bad.evidence).toBe(
      'pretty: details.fix "🔧 run x"; stream: error.message "\\u001b[31mbroke\\u001b[0m"; notice: notice.message "⚠️ old"',
    )
  })
})

describe('verify: the author’s sandbox settings', () => {
  it('passes named settings and loopback upstreams; keeps the sandbox option after a NODE_OPTIONS given', () => {
    const settings = sandboxSettings(
      ['API_URL=http://127.0.0.1:4010', 'TOKEN=a=b', 'NODE_OPTIONS=--no-deprecation'],
      ['http://127.0.0.1:4010', 'http://localhost:5000/v1', 'http://[::1]:6000', 'https://127.0.0.2:8443'],
    )
    expect(settings.env).toEqual({ API_URL: 'http://127.0.0.1:4010', TOKEN: 'a=b', NODE_OPTIONS: '--no-deprecation' })
    const env = sandboxEnv(settings)
    expect(env.NO_PROXY).toBe('127.0.0.1:4010,localhost:5000,[::1]:6000,127.0.0.2:8443')
    expect(env.NODE_OPTIONS).toBe(`--no-deprecation ${SANDBOX_NODE_OPTIONS}`)
    // Nothing given: no upstream is reached directly, and the network cut is still preloaded.
    expect(sandboxEnv(sandboxSettings())).toEqual({ NODE_OPTIONS: SANDBOX_NODE_OPTIONS })
    expect(SANDBOX_NODE_OPTIONS).toBe(`--require="${NET_CUT}"`)
    expect(NET_CUT).toMatch(/[\\/]verify[\\/]net-cut\.cjs$/)
  })

  it("the sandbox cuts a Node target's network with the preload, not Node's proxy agent; the dead proxy stays for others", () => {
    const t = target(['node', '-e', '0'], 1_000, sandboxEnv(sandboxSettings([], ['http://127.0.0.1:4010'])))
    try {
      expect(t.env.NODE_USE_ENV_PROXY).toBeUndefined()
      expect(t.env.NODE_OPTIONS).toBe(SANDBOX_NODE_OPTIONS)
      expect(t.env).toMatchObject({
        HTTP_PROXY: 'http://127.0.0.1:9',
        HTTPS_PROXY: 'http://127.0.0.1:9',
        NO_PROXY: '127.0.0.1:4010',
      })
    } finally {
      t.dispose()
    }
  })

  it('quotes the preload so Node finds it under a path with a space, a quote or a backslash', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli verify "q" \\ '))
    try {
      const preload = join(dir, 'net cut.cjs')
      mkdirSync(dir, { recursive: true })
      writeFileSync(preload, "process.stdout.write('preloaded ')")
      const run = spawnSync(process.execPath, ['-e', "process.stdout.write('main')"], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, NODE_OPTIONS: `${requireOption(preload)} --no-deprecation` },
      })
      expect(run.stderr).toBe('')
      expect(run.stdout).toBe('preloaded main')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it.each([
    [['HOME=/x'], []],
    [['xdg_config_home=/x'], []],
    [['Http_Proxy=http://a:1'], []],
    [['1BAD=x'], []],
    [['NOVALUE'], []],
    [[], ['http://192.168.1.1:80']],
    [[], ['http://127.0.0.1']],
    [[], ['http://127.0.0.1.evil.com:80']],
    [[], ['ftp://127.0.0.1:21']],
    [[], ['not a url']],
  ])('refuses %j %j with E_VALIDATION', (env, upstreams) => {
    expect(() => sandboxSettings(env, upstreams)).toThrow(expect.objectContaining({ code: 'E_VALIDATION' }))
  })
})

describe('verify: two calls at a time', () => {
  it('runs at most two at once, every item once, and answers in the items’ order whatever finishes first', async () => {
    let running = 0
    let most = 0
    const seen: number[] = []
    const delays = [30, 5, 20, 1, 10, 0, 15]
    const out = await twoAtATime(delays, async (ms, index) => {
      running++
      most = Math.max(most, running)
      await new Promise((resolve) => setTimeout(resolve, ms))
      seen.push(index)
      running--
      return `#${index}`
    })
    expect(out).toEqual(delays.map((_, i) => `#${i}`))
    expect(most).toBe(2)
    expect([...seen].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(await twoAtATime([], async () => 1)).toEqual([])
  })
})
