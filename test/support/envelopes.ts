import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { expect } from 'vitest'
import { invocation as fuzzInvocation, prng } from '../../src/verify/fuzz.js'
import type { Ref } from '../../src/verify/reference-types.js'
import { CLOCK_PRELOAD, ROOT, seed, storePath } from './helpers.js'

/*
 * The example tool's envelopes as the release before issue 21 printed them (one path for every run replaced two):
 * stdout, whether anything reached stderr, the exit code. `RECORD_ENVELOPES=1` rewrites the fixture from the
 * current build (test/cli/contract/envelopes.test.ts); it is committed recorded from the build of the commit
 * before the change, so a replay proves the redesign kept every envelope byte for byte. The replay runs in-process
 * (test/unit/contract/envelopes.test.ts) but for the calls that need a process of their own (a clock preload),
 * which the spawn tier replays with their groups.
 */

/** The recorded envelopes. */
export const FIXTURE = join(ROOT, 'test/fixtures/envelopes/tasks.json')
/** `RECORD_ENVELOPES=1`: record instead of replay. */
export const RECORD = process.env.RECORD_ENVELOPES === '1'

/** How one call is run: the spawned bin (`tasks`) or in-process (`tasksInProcess`). */
export type Runner = (
  box: Sandbox,
  args: readonly string[],
  options: { env: Record<string, string> },
) => Promise<ToolRun>

/** One call; `{token}`, `{flipped}` and `{cursor}` in args stand for what the group's earlier calls printed. */
export type Call = { args: string[]; env?: Record<string, string> }
export type Step = Call & { stdout: string; stderr: boolean; code: number }
export type Group = {
  name: string
  setup: Array<'seed' | 'notice' | 'corrupt-notice' | 'seed-more'>
  /** `write`: clock readings and token ids blanked too (a write's own times differ between runs). */
  blank: 'read' | 'write'
  calls: Array<Call | 'seed-more'>
}
export type Recorded = { group: string; setup: Group['setup']; blank: Group['blank']; steps: Array<Step | 'seed-more'> }

const SEEDED = Array.from({ length: 7 }, (_, i) => ({ id: String(i + 1), title: `task ${i + 1}` }))
const CLOCK = (ms: number) => ({ NODE_OPTIONS: '--import={clock}', TEST_CLOCK_SHIFT_MS: String(ms) })

/** stdout with what differs between two runs blanked: durations, fresh tokens, their expiry, this machine's paths. */
function stable(stdout: string, b: Sandbox): string {
  return stdout
    .replaceAll(b.root, '<box>')
    .replaceAll(ROOT, '<root>')
    .replace(/"duration_ms": ?\d+/g, '"duration_ms":0')
    .replace(/ct_3\.[\w.-]+/g, '<token>')
    .replace(/(expires_at"?: *"?)\d{4}-\d\d-\d\dT[\d:.]+Z/g, '$1<time>')
}
const blankWrite = (stdout: string) =>
  stdout
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/"token_id": ?"[^"]*"/g, '"token_id":"<id>"')

const EDGES: Call[] = [
  ['list'],
  ['list', '--compact'],
  ['list', '--limit', '2'],
  ['list', '--limit=2', '--status=open'],
  ['list', '--limit', '0'],
  ['list', '--limit', '101'],
  ['list', '--limit', 'x'],
  ['list', '--limit'],
  ['list', '--limit', '2', '--limit', '3'],
  ['list', '--status', 'nope'],
  ['list', '--status', 'done'],
  ['list', '--bogus'],
  ['list', '--bogus', '--also=1', '-x'],
  ['list', 'stray'],
  ['list', '--fields', 'id,title'],
  ['list', '--fields', 'nope'],
  ['list', '--fields', ','],
  ['list', '--fields', 'items.id,next_cursor'],
  ['list', '--format', 'text'],
  ['list', '--format', 'text', '--quiet'],
  ['list', '--format', 'raw'],
  ['list', '--format', 'yaml'],
  ['list', '--json', '--format', 'text'],
  ['list', '--cursor', 'garbage'],
  ['list', '--no-input', '--quiet', '--compact'],
  ['list', '--pretty'],
  ['--pretty', 'list'],
  ['--format', 'text', 'list'],
  ['--compact', 'list', '--limit', '3'],
  ['get', '1'],
  ['get', '1', '--fields', 'title,status'],
  ['get', '1', '--format', 'text'],
  ['get', '999'],
  ['get'],
  ['get', '1', '2'],
  ['get', ''],
  ['get', '-1'],
  ['get', '1', '--limit', '3'],
  ['whoami'],
  ['--version'],
  ['--version', '--format', 'text'],
  ['--json', '--version'],
  ['--version', '--compact'],
  ['--version', 'list'],
  ['--format=text', '--version'],
  ['--format', 'yaml', '--version'],
  // What oclif's Config, router and help answer: help, topics, unknown ids, did-you-mean, `--`.
  ['list', '--help'],
  ['help', 'list'],
  ['job'],
  ['nope'],
  ['lst'],
  [],
  ['delete', '1', '--', '2'],
  ['edit', '1', '--help'],
  ['reference'],
  ['reference', 'list'],
  ['list', '--', 'x'],
  ['login', 'approve'],
  ['context'],
].map((args) => ({ args }))

const ENV_EDGES: Call[] = [
  { args: ['list'], env: { TASKS_FORMAT: 'text' } },
  { args: ['list'], env: { TASKS_FORMAT: 'yaml' } },
  { args: ['list'], env: { TASKS_HTTP_RETRIES: '99' } },
  { args: ['list'], env: { TASKS_DATA_DIR: '/nonexistent/dir' } },
  { args: ['--version'], env: { TASKS_FORMAT: 'text' } },
  { args: ['list', '--limit', '3', '--status', 'open', '--fields', 'id'], env: { TASKS_FORMAT: 'text' } },
  { args: ['get', '1'], env: { TASKS_TOKEN: 'task 1' } },
  { args: ['edit', '1', '--status', 'open', '--dry-run'], env: { TASKS_STATE_URL: 'nope://x' } },
]

const EDITS: Call[] = [
  { args: ['edit', '1', '--status', 'done', '--dry-run'] },
  { args: ['edit', '1', '--status', 'done'] },
  { args: ['edit', '1', '--status', 'done', '--confirm', 'bogus'] },
  { args: ['edit', '1', '--status', 'done', '--confirm', ''] },
  { args: ['edit', '1', '--status', 'done', '--confirm', 'ct_2.x.y'] },
  { args: ['edit', '1', '--status', 'done', '--confirm', '{flipped}'] },
  { args: ['edit', '1', '--status', 'done', '--confirm={flipped}'] },
  { args: ['edit', '1', '--status', 'open', '--confirm', '{token}'] },
  { args: ['edit', '2', '--status', 'done', '--confirm', '{token}'] },
  { args: ['create', '--title', 'x', '--confirm', '{token}'] },
  {
    args: ['edit', '1', '--status', 'done', '--confirm', '{token}'],
    env: { TASKS_ACCOUNT: 'someone-else', TASKS_TOKEN: 't' },
  },
  { args: ['edit', '1', '--status', 'done', '--confirm', '{token}'], env: CLOCK(3_600_000) },
  { args: ['edit', '1', '--status', 'done', '--confirm', '{token}', '--dry-run'] },
  { args: ['edit', '1', '--status', 'done', '--confirm'] },
  { args: ['edit', '1', '--dry-run'] },
  { args: ['edit', '1', '--status', 'nope', '--dry-run'] },
  { args: ['edit', '999', '--status', 'done', '--dry-run'] },
  { args: ['edit', '999', '--status', 'done'] },
  { args: ['edit', '--status', 'done', '--dry-run'] },
  { args: ['edit', '1', '2', '--status', 'done', '--dry-run'] },
  { args: ['edit', '1', '--status', 'done', '--dry-run', '--bogus'] },
  { args: ['edit', '1', '--status', 'done', '--dry-run', '--format', 'text'] },
  { args: ['edit', '1', '--status', 'done', '--dry-run', '--fields', 'confirm_token'] },
  { args: ['--format', 'text', 'edit', '1', '--title', ' ', '--dry-run'] },
  { args: ['edit', '1', '--status', 'done', '--dry-run'], env: { TASKS_FORMAT: 'yaml' } },
  { args: ['create', '--dry-run'] },
  { args: ['create', '--title', '', '--dry-run'] },
  { args: ['create', '--title', 'x'] },
  { args: ['create', '--title', 'x', '--idempotency-key', 'k', '--dry-run'] },
  { args: ['create', '--title', 'x', '--request-id=k', '--dry-run', '--compact'] },
  { args: ['create', '--name', 'x', '--dry-run'] },
  { args: ['delete'] },
  { args: ['delete', '1', '2'] },
  { args: ['delete', '1', '2', '--dry-run'] },
  { args: ['delete', '1', '1', '2', '--dry-run', '--format', 'text'] },
  { args: ['delete', '999', '--dry-run'] },
  { args: ['delete', '1', '999', '--dry-run'] },
  { args: ['delete', '--dry-run', '1', '-x'] },
  { args: ['delete', '1', '--bogus', '--dry-run'] },
  { args: ['delete', '1', '2', '--idempotency-key', 'b', '--dry-run'] },
]

/** A whole write session: previews, confirms, replays, a batch that partly fails and resumes. */
function session(): Group['calls'] {
  const edit = ['edit', '4', '--title', 'renamed']
  const create = ['create', '--title', 'keyed', '--idempotency-key', 'key-1']
  const batch = ['delete', '1', '2', '999', '--idempotency-key', 'batch-1']
  const c = (args: string[]) => ({ args })
  return [
    c([...edit, '--dry-run']),
    c(edit),
    c([...edit, '--confirm', '{token}']),
    c([...edit, '--confirm', '{token}']),
    c([...create, '--dry-run']),
    c([...create, '--confirm', '{token}']),
    c(create),
    c([...create, '--dry-run']),
    c(['create', '--title', 'other', '--idempotency-key', 'key-1', '--dry-run']),
    c(['create', '--title', 'x', '--bogus']),
    c([...batch, '--dry-run']),
    c([...batch, '--confirm', '{token}']),
    'seed-more',
    c([...batch, '--dry-run']),
    c([...batch, '--confirm', '{token}']),
    c(batch),
    c(['list']),
    c(['get', '4', '--format', 'text']),
  ]
}

/** The fuzzer's corpus (`agentcli verify --fuzz`, seed 17) over the tool's own commands; writes only previewed. */
async function fuzzCorpus(box: Sandbox, run: Runner): Promise<Call[]> {
  seed(box, SEEDED)
  const ref = (await run(box, ['reference'], { env: {} })).json as { data: Ref }
  const own = { ...ref.data, commands: ref.data.commands.filter((c) => OWN.test(c.path)) }
  const writes = new Set(own.commands.filter((c) => c.type === 'write').map((c) => c.path.split(' ')[0]))
  const r = prng(17)
  return Array.from({ length: 300 }, () => {
    const plan = fuzzInvocation(r, own)
    const write = writes.has(plan.args[0]!) && !plan.args.includes('--dry-run')
    return { args: write ? [...plan.args, '--dry-run'] : plan.args, env: plan.env }
  })
}
/** The example's reads and writes that print the same envelope on every run (no job ids, checkpoints or streams). */
const OWN = /^(list|get|show|whoami|edit|create|delete)$/

/** Every group of calls the fixture records; the fuzzer's corpus is drawn from `reference` run in `box`. */
export async function groups(box: Sandbox, run: Runner): Promise<Group[]> {
  return [
    { name: 'edges, empty store', setup: [], blank: 'read', calls: EDGES.slice(0, 12) },
    { name: 'edges, seeded store', setup: ['seed'], blank: 'read', calls: [...EDGES, ...ENV_EDGES] },
    { name: 'update notice', setup: ['seed', 'notice'], blank: 'read', calls: NOTICE },
    { name: 'corrupt update notice', setup: ['seed', 'corrupt-notice'], blank: 'read', calls: [{ args: ['list'] }] },
    { name: 'cursor pagination', setup: ['seed'], blank: 'read', calls: CURSOR },
    { name: 'write refusals and tokens', setup: ['seed'], blank: 'write', calls: EDITS },
    { name: 'a write session', setup: ['seed'], blank: 'write', calls: session() },
    { name: 'fuzzer corpus', setup: ['seed'], blank: 'write', calls: await fuzzCorpus(box, run) },
  ]
}
const NOTICE: Call[] = [['list'], ['get', '1', '--format', 'text'], ['--version']].map((args) => ({ args }))
const CURSOR: Call[] = [
  { args: ['list', '--limit', '3'] },
  { args: ['list', '--limit', '3', '--cursor', '{cursor}'] },
  { args: ['list', '--limit', '4', '--cursor', '{cursor}'] },
]

function prepare(b: Sandbox, setup: Group['setup']): void {
  const cache = join(b.env.XDG_CACHE_HOME!, 'tasks')
  for (const step of setup) {
    if (step === 'seed') seed(b, SEEDED)
    if (step === 'seed-more') seedMore(b)
    if (step === 'notice' || step === 'corrupt-notice') {
      mkdirSync(cache, { recursive: true })
      const notice = {
        latest_version: '9.0.0',
        checked_at: '2026-01-01T00:00:00.000Z',
        install_method: 'npm',
        recommended_command: 'npm install -g tasks-example',
        release_url: null,
        severity: 'info',
      }
      const text = step === 'notice' ? JSON.stringify(notice) : '{"latest_version": "not a version"'
      writeFileSync(join(cache, 'update-notice.json'), text)
    }
  }
}

/** Add task 999 to the store: the item a batch could not find exists when it resumes. */
function seedMore(b: Sandbox): void {
  const file = storePath(b)
  const store = JSON.parse(readFileSync(file, 'utf8')) as { tasks: Array<Record<string, unknown>> }
  const at = '2026-01-02T03:04:05.000Z'
  store.tasks.push({ id: '999', title: 'late', status: 'open', created_at: at, updated_at: at, version: 1 })
  writeFileSync(file, JSON.stringify(store))
}

/** Run a group's calls in order in one sandbox; what each printed, normalised. */
export async function play(
  b: Sandbox,
  group: Pick<Group, 'setup' | 'blank' | 'calls'>,
  runner: Runner,
): Promise<Array<Step | 'seed-more'>> {
  prepare(b, group.setup)
  let token = ''
  let cursor = ''
  const steps: Array<Step | 'seed-more'> = []
  for (const call of group.calls) {
    if (call === 'seed-more') {
      seedMore(b)
      steps.push(call)
      continue
    }
    const [head = '', bodyPart = '', mac = ''] = token.split('.')
    const flipped = `${head}.${bodyPart}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`
    const fill = (s: string) =>
      s.replaceAll('{token}', token).replaceAll('{flipped}', flipped).replaceAll('{cursor}', cursor)
    const env = Object.fromEntries(
      Object.entries(call.env ?? {}).map(([k, v]) => [k, v.replaceAll('{clock}', CLOCK_PRELOAD)]),
    )
    const run = await runner(b, call.args.map(fill), { env })
    const data = (run.json as { data?: { confirm_token?: unknown; next_cursor?: unknown } } | undefined)?.data
    if (typeof data?.confirm_token === 'string') token = data.confirm_token
    if (typeof data?.next_cursor === 'string') cursor = data.next_cursor
    const out = stable(run.stdout, b)
    steps.push({
      ...call,
      stdout: group.blank === 'write' ? blankWrite(out) : out,
      stderr: run.stderr.length > 0,
      code: run.code ?? -1,
    })
  }
  return steps
}

/** The recorded fixture (empty while recording). */
export function recorded(): Recorded[] {
  return (RECORD || !existsSync(FIXTURE) ? [] : JSON.parse(readFileSync(FIXTURE, 'utf8'))) as Recorded[]
}

/** Whether a recorded call needs a process of its own: a clock preload (`NODE_OPTIONS`). */
export function needsProcess(step: Step | 'seed-more'): boolean {
  return step !== 'seed-more' && step.env?.NODE_OPTIONS !== undefined
}

/**
 * Replay a recorded group with `runner` and compare every step byte for byte; `skip` leaves steps out (both their
 * call and their check). Returns how many steps were checked.
 */
export async function replay(
  box: Sandbox,
  group: Recorded,
  runner: Runner,
  skip: (step: Step | 'seed-more') => boolean = () => false,
): Promise<number> {
  const steps = group.steps.filter((s) => !skip(s))
  const calls = steps.map((s) => (s === 'seed-more' ? s : { args: s.args, env: s.env ?? {} }))
  const got = await play(box, { setup: group.setup, blank: group.blank, calls }, runner)
  expect(got.length).toBe(steps.length)
  for (const [i, want] of steps.entries()) {
    const have = got[i]!
    if (want === 'seed-more' || have === 'seed-more') {
      expect(have).toEqual(want)
      continue
    }
    const label = `${JSON.stringify(want.args)} ${JSON.stringify(want.env ?? {})}`
    expect(have.stdout, label).toBe(want.stdout)
    expect([have.code, have.stderr], label).toEqual([want.code, want.stderr])
  }
  return steps.length
}
