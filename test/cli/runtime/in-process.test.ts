import { type Sandbox, sandbox } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT, seed, tasks } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'

/**
 * The in-process tier is only as good as its likeness to the real bin: the same calls, played in order in two
 * sandboxes seeded alike, one spawning `bin/run.js` and one through `run(root, { io })` in this process, print the
 * same stdout bytes, exit with the same code and write the same stderr (what differs between any two runs blanked:
 * durations, fresh tokens and their times, each sandbox's path).
 */

type Call = { args: string[]; env?: Record<string, string> }
const SEEDED = Array.from({ length: 5 }, (_, i) => ({ id: String(i + 1), title: `task ${i + 1}` }))

/** Every read of the example, its flags, formats and errors; the router's answers; help. */
const READS: Call[] = [
  ['list'],
  ['list', '--limit', '2'],
  ['list', '--limit=2', '--status=open'],
  ['list', '--limit', '0'],
  ['list', '--limit', 'x'],
  ['list', '--limit'],
  ['list', '--status', 'nope'],
  ['list', '--bogus'],
  ['list', 'stray'],
  ['list', '--fields', 'id,title'],
  ['list', '--fields', 'nope'],
  ['list', '--fields', 'items.id,next_cursor'],
  ['list', '--format', 'text'],
  ['list', '--format', 'text', '--quiet'],
  ['list', '--format', 'raw'],
  ['list', '--format', 'yaml'],
  ['list', '--cursor', 'garbage'],
  ['list', '--pretty'],
  ['--format', 'text', 'list'],
  ['get', '1'],
  ['get', '1', '--fields', 'title,status'],
  ['get', '1', '--format', 'text'],
  ['get', '999'],
  ['get', '999', '--format', 'text'],
  ['get'],
  ['get', '1', '2'],
  ['show', '1'],
  ['whoami'],
  ['export'],
  ['export', '--format', 'raw'],
  ['export', '--format', 'text'],
  ['export', '--status', 'nope'],
  ['--version'],
  ['--version', '--format', 'text'],
  ['--version', 'list'],
  ['list', '--help'],
  ['help', 'list'],
  ['edit', '1', '--help'],
  ['job'],
  ['nope'],
  ['lst'],
  [],
  ['reference'],
  ['reference', 'list'],
  ['reference', '--compact'],
  ['context'],
  ['doctor'],
  ['changelog'],
  ['job', 'status', '--id', 'j_nope'],
].map((args) => ({ args }))

const ENV: Call[] = [
  { args: ['list'], env: { TASKS_FORMAT: 'text' } },
  { args: ['list'], env: { TASKS_FORMAT: 'yaml' } },
  { args: ['list'], env: { TASKS_HTTP_RETRIES: '99' } },
  { args: ['list'], env: { TASKS_DATA_DIR: '/nonexistent/dir' } },
  { args: ['list'], env: { AGENTCLI_VALIDATE_OUTPUT: 'maybe' } },
  { args: ['get', '1'], env: { TASKS_TOKEN: 'task 1' } },
  { args: ['context'], env: { TASKS_PROFILE: 'staging' } },
  { args: ['whoami'], env: { TASKS_TOKEN: 'tok_abcdef123456', TASKS_ACCOUNT: 'me' } },
]

/** A write's preview, its refusals, its confirmation and the replay of a used token. */
const WRITES: Call[] = [
  { args: ['edit', '1', '--status', 'done', '--dry-run'] },
  { args: ['edit', '1', '--status', 'done'] },
  { args: ['edit', '1', '--status', 'done', '--confirm', 'bogus'] },
  { args: ['edit', '1', '--status', 'done', '--confirm', '{token}'] },
  { args: ['edit', '1', '--status', 'done', '--confirm', '{token}'] },
  { args: ['edit', '1', '--status', 'nope', '--dry-run'] },
  { args: ['edit', '999', '--status', 'done', '--dry-run'] },
  { args: ['edit', '1', '--status', 'done', '--dry-run', '--format', 'text'] },
  { args: ['create', '--title', 'x', '--dry-run'] },
  { args: ['create', '--title', 'x', '--confirm', '{token}'] },
  { args: ['create', '--title', 'y', '--idempotency-key', 'k', '--dry-run'] },
  { args: ['create', '--title', 'y', '--idempotency-key', 'k', '--confirm', '{token}'] },
  { args: ['create', '--title', 'y', '--idempotency-key', 'k', '--confirm', '{token}'] },
  { args: ['delete', '1', '2', '999', '--dry-run'] },
  { args: ['delete', '1', '2', '999', '--confirm', '{token}'] },
  { args: ['delete', '--dry-run', '1', '-x'] },
  { args: ['list', '--format', 'text'] },
]

type Seen = { stdout: string; stderr: string; code: number | null }

/** What differs between any two runs, blanked; the sandbox's own path as `<box>`. */
function stable(text: string, box: Sandbox): string {
  return text
    .replaceAll(box.root, '<box>')
    .replaceAll(ROOT, '<root>')
    .replace(/"duration_ms": ?\d+/g, '"duration_ms":0')
    .replace(/ct_3\.[\w.-]+/g, '<token>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/"token_id": ?"[^"]*"/g, '"token_id":"<id>"')
    .replace(/\b(in|after) \d+(\.\d+)?\s?m?s\b/g, '$1 <ms>')
}

/** Play `calls` in order in a fresh seeded sandbox; `{token}` stands for the last confirm token printed. */
async function play(calls: Call[], runner: typeof tasks): Promise<Seen[]> {
  const box = sandbox()
  boxes.push(box)
  seed(box, SEEDED)
  let token = ''
  const seen: Seen[] = []
  for (const call of calls) {
    const args = call.args.map((a) => a.replaceAll('{token}', token))
    const run = await runner(box, args, { env: call.env ?? {} })
    const data = (run.json as { data?: { confirm_token?: unknown } } | undefined)?.data
    if (typeof data?.confirm_token === 'string') token = data.confirm_token
    seen.push({ stdout: stable(run.stdout, box), stderr: stable(run.stderr, box), code: run.code })
  }
  return seen
}

const boxes: Sandbox[] = []
afterAll(() => {
  for (const box of boxes.splice(0)) box.cleanup()
})

describe('an in-process run prints what the spawned bin prints', () => {
  for (const [name, calls] of [
    ['reads, formats, fields, the router and help', READS],
    ['settings from the environment', ENV],
    ['a write: preview, refusals, confirm, replay', WRITES],
  ] as const) {
    it(`${name} (${calls.length} calls)`, async () => {
      const spawned = await play([...calls], tasks)
      const inProcess = await play([...calls], tasksInProcess)
      for (const [i, call] of calls.entries()) {
        const label = `${JSON.stringify(call.args)} ${JSON.stringify(call.env ?? {})}`
        expect(inProcess[i]!.stdout, label).toBe(spawned[i]!.stdout)
        expect(inProcess[i]!.code, label).toBe(spawned[i]!.code)
        expect(inProcess[i]!.stderr, label).toBe(spawned[i]!.stderr)
      }
      // Not vacuous: every group answers successes and failures; the reads write to stderr too.
      expect(spawned.some((s) => s.code === 0) && spawned.some((s) => s.code !== 0)).toBe(true)
      if (calls === READS) expect(spawned.filter((s) => s.stderr.length > 0).length).toBeGreaterThan(0)
    }, 300_000)
  }
})
