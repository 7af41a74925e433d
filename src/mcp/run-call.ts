import { type ChildProcess, spawn } from 'node:child_process'
import { WARM_FLAG, WARM_MESSAGE, type WarmCall } from '../boot/warm.js'
import { parseJsonObject } from '../output/json-object.js'
import { OWN_GROUP } from '../runtime/process-group.js'
import { toolEnv } from '../settings/tool-env.js'
import { MAX_ARGV_BYTES } from './argv.js'
import { stop, stopping, track } from './children.js'
import type { InProcessRunner } from './in-process.js'
import type { WarmPool } from './pool.js'

/** How the server starts one CLI call of its own tool. */
export type Launcher = {
  /** The executable and the arguments before the command (node and the tool's bin script). */
  command: readonly string[]
  /** The tool's bin name, to clear its `<BIN>_FORMAT`: an MCP call always answers in JSON. */
  bin: string
  /**
   * What a command this tool prints (a checkpoint's `resume`) may start with: its bin name, or the words that
   * start it again off PATH (`node /abs/bin/run.js`). Only matched, never run: a call always runs `command`.
   */
  prefixes: readonly string[]
  /** Called with the PID of every call started (the server logs it on stderr); `warm` when a warm process took it. */
  onSpawn?: (pid: number, argv: readonly string[], warm: boolean) => void
  /** Processes started ahead of calls (see {@link startWarm}); a call takes one when one is ready, else starts cold. */
  pool?: WarmPool
  /** Runs a read call in the server's own process when it is free (src/mcp/in-process.ts); else a process runs it. */
  inProcess?: InProcessRunner
  /** Called with the argv of every call run in the server's own process (the server logs it on stderr). */
  onInProcess?: (argv: readonly string[]) => void
  /** How long a stopped call has before SIGKILL (`agentcli.mcp.kill_grace_ms`); unset is `KILL_GRACE_MS`. */
  killGraceMs?: number
}

/** The server's environment as its first call found it, without `<BIN>_FORMAT` (named too), per tool bin. */
const serverEnvs = new Map<string, { env: Record<string, string>; format: string }>()

/**
 * The environment of every call: the server's, without `<BIN>_FORMAT` (an MCP call always answers in JSON), with
 * the call's own on top. The server's part is copied once (reading `process.env` goes through the OS environment
 * key by key): nothing in the server changes it, and a read run in the server that did (`process.env.X = …`)
 * reaches no later call, as a child's change would not.
 */
function callEnv(launcher: Pick<Launcher, 'bin'>, extra: Record<string, string> = {}): Record<string, string> {
  let server = serverEnvs.get(launcher.bin)
  if (!server) {
    const format = toolEnv(launcher.bin).name('FORMAT')
    const env = { ...process.env } as Record<string, string>
    delete env[format]
    server = { env, format }
    serverEnvs.set(launcher.bin, server)
  }
  const env = { ...server.env, ...extra }
  // The call's own never brings the format back either.
  delete env[server.format]
  return env
}

/**
 * Start one warm process of the tool (src/boot/warm.ts): the same executable, environment, stdio and process group
 * as a cold call, plus an IPC channel, with {@link WARM_FLAG} as its only argument. It loads the tool and waits.
 */
export function startWarm(launcher: Pick<Launcher, 'command' | 'bin'>): ChildProcess {
  const [exe, ...pre] = launcher.command
  return spawn(exe!, [...pre, WARM_FLAG], {
    env: callEnv(launcher),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    detached: OWN_GROUP,
  })
}

/**
 * What one CLI call printed: the envelope, or for a stream the gathered envelope; the exit code, `null` when the
 * process was killed by a signal, or (a warm process) answered before it was reaped.
 */
export type CallResult = {
  envelope: Record<string, unknown>
  exitCode: number | null
  /** How the call ran (a process started for it, a warm one, the server's own) and the end of its stderr: the log's. */
  ran?: 'cold' | 'warm' | 'in-process'
  stderr?: string
}

type StreamLine = {
  ok: boolean
  type?: string
  schema_version?: string
  data?: unknown
  error?: unknown
  meta?: unknown
}

/**
 * Run the tool's own bin once with `argv`, exactly as a shell would (stdin closed, the server's environment), and
 * return the envelope it printed. A ready warm process of `launcher.pool` is handed the call (argv and the call's
 * environment over its IPC channel; it runs what a cold start runs, then exits); without one, the bin starts cold.
 * Either way the process is followed, stopped and read by the same code below. `signal` aborting (the client cancelled, or gave up waiting) sends the call's
 * process group SIGINT, as Ctrl-C does on the CLI, and SIGKILL after a grace (see {@link stop}). For a stream
 * command at most `maxItems` items are kept; the child is stopped once more arrive, and the envelope says it was
 * truncated.
 */
export function runCall(
  launcher: Launcher,
  argv: readonly string[],
  options: {
    signal?: AbortSignal
    stream?: boolean
    maxItems?: number
    env?: Record<string, string>
    /** The call is a plain read (see `runsInProcess`): the server's own process may run it, if free. */
    inProcess?: boolean
  } = {},
): Promise<CallResult> {
  const [exe, ...pre] = launcher.command
  const started = performance.now()
  // A call cancelled before it starts goes to a process, as it always did (its answer is a cold start's).
  if (options.inProcess && !options.stream && !options.signal?.aborted && launcher.inProcess?.take())
    return inProcessCall(launcher, launcher.inProcess, argv, options, started)
  return new Promise((resolve) => {
    let child: ChildProcess
    // A call cancelled before it starts starts cold, as it always did: its answer is the cold start's; so does one
    // longer than a command line takes (the OS's refusal is the cold start's answer; toArgv bounds every call).
    const warm = options.signal?.aborted || !fitsCommandLine(argv) ? undefined : launcher.pool?.take()
    if (warm) {
      child = warm
      // What the process lacks of a cold start's environment: the call's own, `<BIN>_FORMAT` never among it.
      const env = callEnv(launcher, options.env)
      const extra = Object.fromEntries(Object.keys(options.env ?? {}).flatMap((k) => (k in env ? [[k, env[k]!]] : [])))
      const call: WarmCall = { type: WARM_MESSAGE.call, argv: [...argv], env: extra }
      // A send that fails (the process died just now) closes its stdout with no envelope: answered below.
      child.send(call, (error) => {
        if (error) void stop(child, 'SIGKILL', 0)
      })
    } else {
      try {
        // A group of its own: a stop reaches whatever the call started, and the server's terminal does not.
        child = spawn(exe!, [...pre, ...argv], {
          env: callEnv(launcher, options.env),
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: OWN_GROUP,
        })
      } catch (error) {
        // Some refusals (E2BIG: the arguments exceed what the OS takes) are thrown, not emitted.
        resolve({
          envelope: internal(`could not start the tool: ${(error as Error).message}`, started),
          exitCode: null,
        })
        return
      }
    }
    const ran = warm ? 'warm' : 'cold'
    if (child.pid !== undefined) launcher.onSpawn?.(child.pid, argv, warm !== undefined)
    track(child, launcher.killGraceMs)
    const stdout = child.stdout!
    const stderrStream = child.stderr!
    const out: Buffer[] = []
    const err: Buffer[] = []
    const items: unknown[] = []
    let pending = ''
    let cut = false
    let last: StreamLine | undefined
    let schemaVersion = '1.0'
    const onAbort = () => void stop(child, 'SIGINT')
    options.signal?.addEventListener('abort', onAbort, { once: true })
    // Cancelled while it was starting: the listener came too late to hear it.
    if (options.signal?.aborted) onAbort()
    stderrStream.on('data', (c: Buffer) => {
      if (err.length < 64) err.push(c)
    })
    stdout.on('data', (c: Buffer) => {
      if (!options.stream) return void out.push(c)
      pending += c.toString('utf8')
      let nl = pending.indexOf('\n')
      while (nl !== -1) {
        const line = pending.slice(0, nl)
        pending = pending.slice(nl + 1)
        nl = pending.indexOf('\n')
        const parsed = parseLine(line)
        if (!parsed) continue
        schemaVersion = parsed.schema_version ?? schemaVersion
        if (parsed.type === 'item') {
          if (items.length < (options.maxItems ?? Number.POSITIVE_INFINITY)) items.push(parsed.data)
          else if (!cut) {
            cut = true
            void stop(child, 'SIGTERM')
          }
        } else if (!cut) last = parsed
      }
    })
    child.on('error', (error) => {
      options.signal?.removeEventListener('abort', onAbort)
      resolve({ envelope: internal(`could not start the tool: ${error.message}`, started), exitCode: null })
    })
    const answer = (code: number | null, early: boolean): boolean => {
      const stderr = Buffer.concat(err).toString('utf8').slice(-2000)
      let result: CallResult
      if (options.stream) {
        // Complete in its own right: a last line came and nothing was cut (a cut call's process is being stopped).
        if (early && (cut || !last)) return false
        result = {
          envelope: gathered(items, last, cut, schemaVersion, options.maxItems, started, stderr),
          exitCode: code,
          ran,
          stderr,
        }
      } else {
        const envelope = parseJsonObject(Buffer.concat(out).toString('utf8'))
        if (early && !envelope) return false
        result = { envelope: envelope ?? noEnvelope(code, stderr, started), exitCode: code, ran, stderr }
      }
      options.signal?.removeEventListener('abort', onAbort)
      resolve(result)
      return true
    }
    child.on('close', (code) => void answer(code, false))
    // A warm process closes its stdout and stderr as the last step of its exit (src/boot/warm.ts): once both are
    // read to their end, a complete answer is final, without waiting for the kernel to tear the process down (it
    // is still followed until it exits). Anything less complete, and a call that was being stopped (cancelled,
    // cut, the server stopping: its answer comes once its process is gone), waits for 'close', as a cold start's.
    if (warm) {
      let open = 2
      const ended = () => {
        if (--open === 0 && !stopping(child)) answer(child.exitCode, true)
      }
      stdout.once('close', ended)
      stderrStream.once('close', ended)
    }
  })
}

/**
 * One call run by the server's own process (`run(root, { io })`): the environment a child would get, the call's
 * signal as its SIGINT, and its stdout read by the same parser as a child's, so the envelope is the CLI's by
 * construction. A run still going long after its cancel is answered as a killed child is.
 */
async function inProcessCall(
  launcher: Launcher,
  runner: InProcessRunner,
  argv: readonly string[],
  options: { signal?: AbortSignal; env?: Record<string, string> },
  started: number,
): Promise<CallResult> {
  launcher.onInProcess?.(argv)
  const result = await runner.run(argv, callEnv(launcher, options.env), options.signal)
  if (!result)
    return {
      envelope: internal('the call did not stop after it was cancelled: it was abandoned', started),
      exitCode: null,
    }
  const envelope = parseJsonObject(result.stdout)
  return {
    envelope: envelope ?? noEnvelope(result.exitCode, result.stderr.slice(-2000), started),
    exitCode: result.exitCode,
    ran: 'in-process',
    stderr: result.stderr.slice(-2000),
  }
}

/** What a call that printed no envelope answers (a crash: its stderr's end says why). */
function noEnvelope(code: number | null, stderr: string, started: number): Record<string, unknown> {
  return internal(`the tool printed no envelope (exit ${code}): ${stderr.trim()}`, started)
}

function fitsCommandLine(argv: readonly string[]): boolean {
  return argv.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0) <= MAX_ARGV_BYTES
}

function parseLine(line: string): StreamLine | undefined {
  try {
    const value = JSON.parse(line) as unknown
    return value && typeof value === 'object' ? (value as StreamLine) : undefined
  } catch {
    return undefined
  }
}

function internal(message: string, started: number): Record<string, unknown> {
  return {
    ok: false,
    schema_version: '1.0',
    error: { code: 'E_INTERNAL', message, details: {}, retryable: false },
    meta: { duration_ms: Math.round(performance.now() - started) },
  }
}

/** A stream's lines as one envelope: the items in `data.items`, the summary line's data in `data.summary`. */
function gathered(
  items: unknown[],
  last: StreamLine | undefined,
  cut: boolean,
  schemaVersion: string,
  maxItems: number | undefined,
  started: number,
  stderr: string,
): Record<string, unknown> {
  if (!cut && last?.ok === false)
    return { ok: false, schema_version: schemaVersion, error: last.error, meta: last.meta }
  if (!cut && last?.type !== 'summary')
    return internal(`the stream ended without a summary line: ${stderr.trim()}`, started)
  const meta: Record<string, unknown> = cut
    ? {
        duration_ms: Math.round(performance.now() - started),
        truncated: true,
        truncation_hint: `only the first ${maxItems} items are returned: narrow the call, or raise max_items`,
      }
    : { ...(last?.meta as Record<string, unknown>) }
  const summary = cut ? { count: items.length } : ((last?.data as Record<string, unknown>) ?? {})
  return { ok: true, schema_version: schemaVersion, data: { items, summary }, meta }
}
