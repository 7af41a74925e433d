import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type RunToolOptions, runTool, type Sandbox, sandbox, type ToolRun } from 'agentcli/testing'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { pendingRecord } from '../../src/jobs/record.js'
import type { JobRecord } from '../../src/jobs/types.js'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
export const TASKS_BIN = join(ROOT, 'examples/tasks/bin/run.js')
/**
 * The fixture CLI's bin: in the spawn tier, a bundled copy its global setup builds (test/support/fixture-bundle.global.ts);
 * elsewhere the source, from its modules.
 */
export const FIXTURE_BIN = process.env.AGENTCLI_TEST_FIXTURE_BIN ?? join(ROOT, 'test/fixtures/cli/bin/run.js')
/** The test-only clock preload (`node --import`): shifted by `TEST_CLOCK_SHIFT_MS`. No tool ships it. */
export const CLOCK_PRELOAD = join(ROOT, 'test/fixtures/clock.mjs')

/** The environment that runs a tool with its clock shifted by `ms` (negative: in the past). */
export function shiftedClock(ms: number): Record<string, string> {
  return { NODE_OPTIONS: `--import=${CLOCK_PRELOAD}`, TEST_CLOCK_SHIFT_MS: String(ms) }
}

/**
 * A sandbox per test, removed afterwards. `ownCodeCache`: the tool keeps its code cache under the sandbox's HOME, as
 * for a user, instead of the one the process's sandboxes share (for tests of the cache itself).
 */
export function useSandbox(options: { ownCodeCache?: boolean } = {}): () => Sandbox {
  let current: Sandbox | undefined
  afterEach(() => {
    current?.cleanup()
    current = undefined
  })
  return () => {
    if (current === undefined) {
      current = sandbox()
      if (options.ownCodeCache) delete current.env.AGENTCLI_CODE_CACHE_DIR
    }
    return current
  }
}

/**
 * One sandbox and one server (`start` in it) for all the tests of the describe it is called in: `stop` ends the
 * server before the sandbox goes. The getter throws outside those tests.
 */
export function useSharedServer<T>(
  what: string,
  start: (box: Sandbox) => Promise<T>,
  stop: (server: T) => Promise<unknown>,
): () => { box: Sandbox } & T {
  let shared: ({ box: Sandbox } & T) | undefined
  let box: Sandbox | undefined
  beforeAll(async () => {
    box = sandbox()
    shared = { box, ...(await start(box)) }
  })
  afterAll(async () => {
    if (shared) await stop(shared)
    box?.cleanup()
    shared = undefined
    box = undefined
  })
  return () => {
    if (!shared) throw new Error(`the shared ${what} exists only while the tests of its describe run`)
    return shared
  }
}

/** Run the example tool in a sandbox. */
export function tasks(box: Sandbox, args: readonly string[], options: RunToolOptions = {}): Promise<ToolRun> {
  return runTool(TASKS_BIN, args, { ...options, env: { ...box.env, ...options.env } })
}

/** Run the fixture CLI in a sandbox. */
export function fixture(box: Sandbox, args: readonly string[], options: RunToolOptions = {}): Promise<ToolRun> {
  return runTool(FIXTURE_BIN, args, { ...options, env: { ...box.env, ...options.env } })
}

/** The example tool's store file inside a sandbox. */
export function storePath(box: Sandbox): string {
  return join(box.env.XDG_DATA_HOME!, 'tasks', 'tasks.json')
}

type SeedTask = { id: string; title: string; status?: 'open' | 'done' }

/** Write tasks straight into the store file (real file, as a previous run would have left it). */
export function seed(box: Sandbox, list: SeedTask[]): void {
  const path = storePath(box)
  mkdirSync(dirname(path), { recursive: true })
  const at = '2026-01-02T03:04:05.000Z'
  const tasksOut = list.map((t) => ({
    id: t.id,
    title: t.title,
    status: t.status ?? 'open',
    created_at: at,
    updated_at: at,
    version: 1,
  }))
  const next = Math.max(0, ...list.map((t) => Number(t.id))) + 1
  writeFileSync(path, JSON.stringify({ schema: 1, next_id: next, tasks: tasksOut }))
}

/** The store file's bytes, to prove a call changed nothing. */
export function storeBytes(box: Sandbox): string {
  try {
    return readFileSync(storePath(box), 'utf8')
  } catch {
    return '<absent>'
  }
}

/** The envelope of a run, typed loosely for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary envelope members
export function env(run: ToolRun): any {
  return run.json
}

/** Whether a process we started is still alive (signal 0 delivers nothing). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  // A zombie has exited already: it waits only to be reaped, by its parent or, orphaned, by PID 1, which here may
  // take seconds. `state` follows the command name, which may itself hold spaces and parentheses.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    // Gone since the signal (Linux), or no /proc to tell a zombie by (then signal 0 is all there is).
    return !existsSync('/proc/self/stat')
  }
}

/**
 * Poll `fn` until it answers something other than `undefined`, and return that. The bound is far past what any
 * awaited event takes, so load slows a test down but cannot fail it; past it, the wait throws.
 */
export async function until<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await fn()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** A job record as a submission writes it, with `fields` over it: tests forge records a worker then meets. */
export function jobRecord(fields: Partial<JobRecord> & Pick<JobRecord, 'job_id' | 'command'>): JobRecord {
  return { ...pendingRecord({ argv: [], schema_version: '1.0', ...fields }), ...fields }
}
