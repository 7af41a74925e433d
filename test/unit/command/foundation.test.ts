import { envelopeViolations } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, seed, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * One envelope for every outcome, the catalogue, the universal flags and lists, in-process (test/support/in-process.ts).
 * What needs the process's own handlers or a fixture reading process.env: test/cli/command/foundation.test.ts.
 */
const box = useSandbox()

type Case = { name: string; args: string[]; code: string | null; exit: number }

const CASES: Case[] = [
  { name: 'success', args: ['list'], code: null, exit: 0 },
  { name: 'not found', args: ['get', '999'], code: 'E_NOT_FOUND', exit: 3 },
  { name: 'unknown flag', args: ['list', '--bogus'], code: 'E_USAGE', exit: 2 },
  { name: 'missing argument', args: ['get'], code: 'E_USAGE', exit: 2 },
  { name: 'bad enum value', args: ['list', '--status', 'nope'], code: 'E_VALIDATION', exit: 2 },
  { name: 'non-integer', args: ['list', '--limit', 'abc'], code: 'E_VALIDATION', exit: 2 },
  { name: 'out of range', args: ['list', '--limit', '0'], code: 'E_VALIDATION', exit: 2 },
  { name: 'extra argument', args: ['get', '1', '2'], code: 'E_USAGE', exit: 2 },
  { name: 'unknown command', args: ['lst'], code: 'E_USAGE', exit: 2 },
  { name: 'unknown field', args: ['list', '--fields', 'id,nope'], code: 'E_VALIDATION', exit: 2 },
  { name: '--format yaml', args: ['list', '--format', 'yaml'], code: 'E_VALIDATION', exit: 2 },
  { name: '--format raw on a non-raw command', args: ['list', '--format', 'raw'], code: 'E_USAGE', exit: 2 },
  { name: 'no command, flags only', args: ['--limit', '3'], code: 'E_USAGE', exit: 2 },
]

describe('every outcome is one envelope', () => {
  it.each(CASES)('$name → $code, exit $exit', async ({ args, code, exit }) => {
    seed(box(), [{ id: '1', title: 'first' }])
    const run = await tasks(box(), args)
    expect(run.code).toBe(exit)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run).ok).toBe(code === null)
    if (code) expect(env(run).error.code).toBe(code)
  })

  it('a thrown internal error is E_INTERNAL, exit 1, no stack on stdout or stderr', async () => {
    const run = await fixture(box(), ['boom'])
    expect(run.code).toBe(1)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run).error.code).toBe('E_INTERNAL')
    expect(run.stdout + run.stderr).not.toMatch(/\n\s+at /)
  })

  it('prints the stack on stderr only with DEBUG', async () => {
    const run = await fixture(box(), ['boom'], { env: { DEBUG: '1' } })
    expect(run.stderr).toMatch(/\n\s+at /)
    expect(run.stdout).not.toMatch(/\n\s+at /)
  })

  it('--quiet silences stderr chatter but leaves stdout unchanged', async () => {
    const loud = await fixture(box(), ['chatty', '--compact'])
    const quiet = await fixture(box(), ['chatty', '--compact', '--quiet'])
    expect(quiet.stderr).not.toContain('warning: a warning')
    const strip = (s: string) => s.replace(/"duration_ms":\d+/, '')
    expect(strip(quiet.stdout)).toBe(strip(loud.stdout))
  })

  it("oclif's this.exit(0) is a success, not an EEXIT error", async () => {
    const run = await fixture(box(), ['exit'])
    expect(run.code).toBe(0)
    expect(env(run)).toMatchObject({ ok: true, data: null })
  })
})

describe('the error catalogue', () => {
  it('a declared extension code takes its exit and retryable from the table', async () => {
    const run = await fixture(box(), ['quota'])
    expect(run.code).toBe(7)
    expect(env(run).error).toMatchObject({ code: 'E_QUOTA_EXCEEDED', retryable: true, details: { limit: 10 } })
  })

  it('enum rejections carry allowed and got', async () => {
    const run = await tasks(box(), ['list', '--status', 'nope'])
    expect(env(run).error.details).toMatchObject({ allowed: ['open', 'done'], got: 'nope', param: '--status' })
    expect(env(run).error.message).toContain('open, done')
  })

  it('range rejections carry allowed and got', async () => {
    const run = await tasks(box(), ['list', '--limit', '500'])
    expect(env(run).error.details).toMatchObject({
      allowed: { type: 'integer', min: 1, max: 100 },
      got: '500',
      param: '--limit',
    })
  })

  it('unknown commands suggest the closest', async () => {
    const run = await tasks(box(), ['lst'])
    expect(env(run).error.details.suggestions).toEqual(['list'])
  })

  it('unknown flags suggest the closest', async () => {
    const run = await tasks(box(), ['list', '--limt', '3'])
    expect(env(run).error.details.suggestions).toEqual(['--limit'])
  })

  it('a topic without a command is E_USAGE listing its commands, never exit 0', async () => {
    const run = await fixture(box(), ['queue'])
    expect(run.code).toBe(2)
    expect(env(run).error.details.allowed).toEqual(['queue status'])
  })

  it('an unknown command under a topic suggests the right one', async () => {
    const run = await fixture(box(), ['queue', 'stat', '--id', '1'])
    expect(env(run).error.details.suggestions).toEqual(['queue status'])
  })

  it('a missing required flag is named', async () => {
    const run = await fixture(box(), ['queue', 'status'])
    expect(run.code).toBe(2)
    expect(env(run).error).toMatchObject({ code: 'E_USAGE', details: { missing: ['--id'] } })
  })

  it('an unknown --fields path names it and lists the valid ones', async () => {
    const run = await tasks(box(), ['get', '1', '--fields', 'title,colour'])
    expect(env(run).error.details.got).toBe('colour')
    expect(env(run).error.details.allowed).toEqual([
      'created_at',
      'id',
      'remote_id',
      'status',
      'title',
      'updated_at',
      'version',
    ])
  })
})

describe('universal flags', () => {
  it('--json and --format json give the same document', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const a = await tasks(box(), ['list', '--json'])
    const b = await tasks(box(), ['list', '--format', 'json'])
    expect({ ...env(a), meta: null }).toEqual({ ...env(b), meta: null })
  })

  it('flags before the command name work', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const run = await tasks(box(), ['--format', 'text', 'list'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^ID\s+TITLE\s+STATUS/)
  })

  it('--format text prints no JSON and keeps the exit code; errors go to stderr with the code', async () => {
    const ok = await tasks(box(), ['list', '--format', 'text'])
    expect(ok.code).toBe(0)
    expect(ok.json).toBeUndefined()
    const bad = await tasks(box(), ['get', '42', '--format', 'text'])
    expect(bad.code).toBe(3)
    expect(bad.stdout).toBe('')
    expect(bad.stderr).toMatch(/^error E_NOT_FOUND: task 42 not found/)
  })

  it('TASKS_FORMAT sets a default; an explicit flag wins; a bad value is E_CONFIG', async () => {
    const text = await tasks(box(), ['list'], { env: { TASKS_FORMAT: 'text' } })
    expect(text.json).toBeUndefined()
    const json = await tasks(box(), ['list', '--json'], { env: { TASKS_FORMAT: 'text' } })
    expect(env(json).ok).toBe(true)
    const bad = await tasks(box(), ['list'], { env: { TASKS_FORMAT: 'xml' } })
    expect(bad.code).toBe(4)
    expect(env(bad).error).toMatchObject({ code: 'E_CONFIG', details: { env: 'TASKS_FORMAT', got: 'xml' } })
  })

  it('--json conflicting with --format text is E_USAGE', async () => {
    const run = await tasks(box(), ['list', '--json', '--format', 'text'])
    expect(run.code).toBe(2)
    expect(env(run).error.code).toBe('E_USAGE')
  })

  it('--compact prints one line', async () => {
    const run = await tasks(box(), ['list', '--compact'])
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(1)
  })

  it('--fields projects items of a list and keeps pagination keys', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b', status: 'done' },
    ])
    const run = await tasks(box(), ['list', '--fields', 'id,status'])
    expect(env(run).data).toEqual({
      items: [
        { id: '1', status: 'open' },
        { id: '2', status: 'done' },
      ],
      count: 2,
      next_cursor: null,
      has_more: false,
    })
  })

  it('--version follows the format', async () => {
    const json = await tasks(box(), ['--version'])
    expect(env(json)).toMatchObject({ ok: true, data: { tool: 'tasks', version: '0.1.0' } })
    const text = await tasks(box(), ['--version', '--format', 'text'])
    expect(text.stdout).toBe('tasks 0.1.0\n')
  })

  it('a bare --help is the root help, exit 0 (regression: it was routed as a missing command)', async () => {
    const run = await tasks(box(), ['--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('COMMANDS')
  })

  it('--help is human text on stdout, exit 0', async () => {
    const run = await tasks(box(), ['list', '--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('List tasks')
    expect(run.stdout).toContain('--status')
  })
})

describe('lists', () => {
  it('pages with a bounded limit, a cursor, and a truncation hint', async () => {
    seed(
      box(),
      Array.from({ length: 5 }, (_, i) => ({ id: String(i + 1), title: `t${i + 1}` })),
    )
    const first = await tasks(box(), ['list', '--limit', '2'])
    expect(env(first).data).toMatchObject({ count: 2, has_more: true })
    expect(env(first).meta).toMatchObject({ truncated: true })
    expect(env(first).meta.truncation_hint).toContain('--cursor')
    const cursor = env(first).data.next_cursor
    const second = await tasks(box(), ['list', '--limit', '2', '--cursor', cursor])
    expect(env(second).data.items.map((t: { id: string }) => t.id)).toEqual(['3', '4'])
    const last = await tasks(box(), ['list', '--limit', '2', '--cursor', env(second).data.next_cursor])
    expect(env(last).data).toMatchObject({ count: 1, has_more: false, next_cursor: null })
    expect(env(last).meta.truncated).toBeUndefined()
  })

  it('the default limit is bounded', async () => {
    seed(
      box(),
      Array.from({ length: 25 }, (_, i) => ({ id: String(i + 1), title: `t${i + 1}` })),
    )
    const run = await tasks(box(), ['list'])
    expect(env(run).data.count).toBe(20)
    expect(env(run).meta.truncated).toBe(true)
  })

  it('a forged cursor is E_VALIDATION', async () => {
    const run = await tasks(box(), ['list', '--cursor', 'garbage'])
    expect(run.code).toBe(2)
    expect(env(run).error.details.param).toBe('--cursor')
  })

  it('filters by status', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b', status: 'done' },
    ])
    const run = await tasks(box(), ['list', '--status', 'done'])
    expect(env(run).data.items.map((t: { id: string }) => t.id)).toEqual(['2'])
  })
})
