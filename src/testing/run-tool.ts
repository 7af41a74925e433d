import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { endWorkers } from '../jobs/end-workers.js'

/** What one run of a tool's real bin produced. */
export type ToolRun = {
  /** The exit code, or null when a signal ended it. */
  code: number | null
  /** The signal that ended it, or null. */
  signal: NodeJS.Signals | null
  /** Everything on stdout. */
  stdout: string
  /** Everything on stderr. */
  stderr: string
  /** stdout parsed as one JSON document, or undefined when it is not exactly one. */
  json: unknown
}

/** Options of {@link runTool}. */
export type RunToolOptions = {
  /** The run's environment, over a bare `PATH` and `NO_COLOR=1` (give it `sandbox().env`); undefined is left out. */
  env?: Record<string, string | undefined>
  /** The working directory of the run. */
  cwd?: string
  /** Kill the run (SIGKILL) after this long (default 20 000 ms). */
  timeoutMs?: number
  /** Validate each command's data against its declared output schema (on by default in tests). */
  validateOutput?: boolean
  /** Called with the child once it started (to send signals). */
  onSpawn?: (child: import('node:child_process').ChildProcess) => void
}

/**
 * A throw-away HOME and XDG directories, so a test never touches the user's real ones, and the test run's shared
 * code cache when it has one.
 */
export type Sandbox = {
  /** The temporary directory holding HOME and the XDG directories. */
  root: string
  /**
   * HOME and XDG variables pointing into it, and `AGENTCLI_CODE_CACHE_DIR` naming the run's shared code cache when
   * the test process has `AGENTCLI_TEST_CODE_CACHE_DIR` (leave it out to test a cache kept under HOME): pass them
   * to `runTool`.
   */
  env: Record<string, string>
  /** End the job workers the tool started under it (detached, they outlive their run), then remove the directory. */
  cleanup(): void
}

/*
 * The code cache every sandbox of a test run shares: `AGENTCLI_TEST_CODE_CACHE_DIR` in the test process, an absolute
 * path the run's global setup made and removes. Each sandbox has its own HOME, so a cache kept there is compiled anew
 * (the whole bundle parsed, about half of that run's CPU; for a tool run from its modules, Node's compile cache of
 * each module) by the first run of each command in every test. Only compiled code is shared, read back by a tool
 * under the same owner and mode checks as a user's cache. Unset, each sandbox keeps its cache under its HOME.
 */
function runCodeCache(): Record<string, string> {
  const dir = process.env.AGENTCLI_TEST_CODE_CACHE_DIR
  return dir && isAbsolute(dir) ? { AGENTCLI_CODE_CACHE_DIR: dir } : {}
}

/** Create a {@link Sandbox}. */
export function sandbox(prefix = 'agentcli-'): Sandbox {
  const root = mkdtempSync(join(tmpdir(), prefix))
  const env = {
    ...runCodeCache(),
    HOME: root,
    XDG_CONFIG_HOME: join(root, 'config'),
    XDG_DATA_HOME: join(root, 'data'),
    XDG_CACHE_HOME: join(root, 'cache'),
    XDG_STATE_HOME: join(root, 'state'),
  }
  // A job worker the test started runs detached, past its run: ended first, or it writes its result and audit line
  // into the directory as it goes (or after, recreating it). The removal is still retried for its last write.
  const cleanup = () => {
    endWorkers(env.XDG_DATA_HOME)
    rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 })
  }
  return { root, env, cleanup }
}

function parseOne(stdout: string): unknown {
  try {
    return JSON.parse(stdout)
  } catch {
    return undefined
  }
}

/**
 * Run a tool's bin as an agent would: stdin closed, no TTY, colour off, and the given environment on top of a
 * minimal one (PATH only), so nothing from the developer's shell leaks in.
 */
export function runTool(bin: string, args: readonly string[], options: RunToolOptions = {}): Promise<ToolRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '1' }
  if (options.validateOutput !== false) env.AGENTCLI_VALIDATE_OUTPUT = '1'
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const stdout = Buffer.concat(out).toString('utf8')
      resolve({ code, signal, stdout, stderr: Buffer.concat(err).toString('utf8'), json: parseOne(stdout) })
    })
    options.onSpawn?.(child)
  })
}
