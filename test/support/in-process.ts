import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { RunToolOptions, Sandbox, ToolRun } from 'agentcli/testing'
import { FIXTURE_BIN, ROOT } from './helpers.js'

type Entry = typeof import('../../src/runtime/entry.js')

let entry: Promise<Entry> | undefined

/**
 * agentcli's entry as a tool's modules see it: `dist/`, which the unit project leaves to Node (vitest.config.ts),
 * so it is the very instance the tool's commands extend (they are told apart by identity, `instanceof
 * BaseCommand`), not a transformed copy of `src/`. Loaded once per test file (a worker runs one file).
 */
function loadEntry(): Promise<Entry> {
  entry ??= import(/* @vite-ignore */ pathToFileURL(join(ROOT, 'dist/runtime/entry.js')).href) as Promise<Entry>
  return entry
}

/** Options of {@link runInProcess}: `runTool`'s, less what only a child process has. */
export type InProcessOptions = Pick<RunToolOptions, 'env' | 'validateOutput'> & {
  /** Aborting it is a SIGINT to the run. */
  signal?: AbortSignal
}

/**
 * One call of a tool in this process, from its modules (never the bundle): `run(root, { io })` writes stdout and
 * stderr into memory, reads `env` instead of `process.env`, and resolves with the exit code. The result has
 * `runTool`'s shape and, for a call that needs no process of its own (no signal, no child, no clock preload),
 * the same bytes (`test/unit/runtime/in-process.test.ts` holds the two side by side).
 */
export function runInProcess(
  toolRoot: string,
  args: readonly string[],
  options: InProcessOptions = {},
): Promise<ToolRun> {
  // One run at a time per process (entry.ts): calls made together (`Promise.all`) run in turn, in call order.
  const turn = queue.then(() => runNow(toolRoot, args, options))
  queue = turn.catch(() => undefined)
  return turn
}

let queue: Promise<unknown> = Promise.resolve()

async function runNow(toolRoot: string, args: readonly string[], options: InProcessOptions): Promise<ToolRun> {
  // runTool's environment: PATH only, colour off, outputs validated against their schemas.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '1' }
  if (options.validateOutput !== false) env.AGENTCLI_VALIDATE_OUTPUT = '1'
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value
  if (env.NODE_OPTIONS) throw new Error('runInProcess: NODE_OPTIONS needs a process of its own (use runTool)')
  const out: Buffer[] = []
  let stderr = ''
  const { run } = await loadEntry()
  const code = await run(toolRoot, {
    argv: [...args],
    io: {
      stdout: (chunk) => void out.push(Buffer.from(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk)),
      stderr: (text) => {
        stderr += text
      },
      env,
      script: join(toolRoot, 'bin/run.js'),
      signal: options.signal,
    },
  })
  const stdout = Buffer.concat(out).toString('utf8')
  return { code, signal: null, stdout, stderr, json: parseOne(stdout) }
}

function parseOne(stdout: string): unknown {
  try {
    return JSON.parse(stdout)
  } catch {
    return undefined
  }
}

/** The example tool's root. */
export const TASKS_ROOT = join(ROOT, 'examples/tasks')

/** Run the example tool in-process in a sandbox: `tasks()` of helpers.ts without the child process. */
export function tasksInProcess(
  box: Sandbox,
  args: readonly string[],
  options: InProcessOptions = {},
): Promise<ToolRun> {
  return runInProcess(TASKS_ROOT, args, { ...options, env: { ...box.env, ...options.env } })
}

/** A job of the example tool once it has finished (its `job status`, polled in-process): throws after 15 s. */
export async function tasksJobDone(box: Sandbox, id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const data = JSON.parse((await tasksInProcess(box, ['job', 'status', '--id', id])).stdout).data
    if (['succeeded', 'failed', 'cancelled'].includes(data.status)) return data
    await new Promise((r) => setTimeout(r, 150))
  }
  throw new Error(`job ${id} did not finish`)
}

/**
 * The fixture CLI's root (test/fixtures/cli: hooks, a plugin-like layout, misbehaving commands); in the spawn tier,
 * the bundled copy's, so a run in-process and a run of its bin are one tool (the same bin in a job's `poll`).
 */
export const FIXTURE_ROOT = dirname(dirname(FIXTURE_BIN))

/** Run the fixture CLI in-process in a sandbox: `fixture()` of helpers.ts without the child process. */
export function fixtureInProcess(
  box: Sandbox,
  args: readonly string[],
  options: InProcessOptions = {},
): Promise<ToolRun> {
  return runInProcess(FIXTURE_ROOT, args, { ...options, env: { ...box.env, ...options.env } })
}

/** `runTool(bin, …)` in-process: the tool whose `bin/run.js` is `bin`. */
export function runBinInProcess(
  bin: string,
  args: readonly string[],
  options: InProcessOptions = {},
): Promise<ToolRun> {
  return runInProcess(dirname(dirname(bin)), args, options)
}

/**
 * The fixture's `hang`, made to ignore its cancel (`FIXTURE_IGNORE_ABORT`, which it reads from process.env) and
 * watched for the `ready` it writes on the process's own stderr once it waits: `ready` resolves then, so a test cancels
 * a run that is surely waiting. `restore()` puts stderr and the environment back.
 */
export function stubbornHang(): { ready: Promise<void>; restore(): void } {
  process.env.FIXTURE_IGNORE_ABORT = '1'
  const write = process.stderr.write.bind(process.stderr)
  let seen: () => void = () => undefined
  const ready = new Promise<void>((resolve) => {
    seen = resolve
  })
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    if (String(chunk) === 'ready\n') seen()
    return write(chunk, ...rest)
  }) as typeof process.stderr.write
  return {
    ready,
    restore: () => {
      process.stderr.write = write
      delete process.env.FIXTURE_IGNORE_ABORT
    },
  }
}
