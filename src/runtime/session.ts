import { clearAudit, pendingAudit } from '../audit/pending.js'
import { builtin } from '../boot/builtin.js'
import type { HeldSignals } from '../boot/early-signals.js'
import { AgentError, usageError } from '../errors/agent-error.js'
import { type Catalogue, CatalogueDefinitionError, CORE_CATALOGUE, defineErrorCodes } from '../errors/catalogue.js'
import { toAgentError } from '../errors/normalize.js'
import { now } from '../output/clock.js'
import { dataOutcome, isOutcome, type Outcome } from '../output/outcome.js'
import { addSensitiveKeys, registerSecret, resetRedaction } from '../output/redact.js'
import { type RenderContext, renderError, renderOutcome } from '../output/render.js'
import type { OutputSinks } from '../output/sinks.js'
import { setRunStderr, writeStderr } from '../output/stderr.js'
import { guardStdout, withRealStdout, writeStdout } from '../output/stdout.js'
import { lockTimeoutMsOf } from '../settings/lock-wait.js'
import { readToolSettings } from '../settings/package-section.js'
import { runEnv, setRunEnv } from '../settings/run-env.js'
import { type ToolEnv, toolEnv } from '../settings/tool-env.js'
import { firstNonGlobal, type Globals, normalizeArgv, scanGlobals } from '../universal-flags/globals.js'
import { UNIVERSAL_FLAG_NAMES } from '../universal-flags/table.js'
import { readUpdateNotice } from '../update/notice-cache.js'
import { exitProcess } from './exit.js'
import { getRunState, isLatestRun, openRun, type RunState, setRunState } from './run-state.js'
import type { ToolConfig } from './tool-config.js'

/** What a session needs to know about the tool (its {@link ToolConfig}). */
export type SessionConfig = Pick<ToolConfig, 'bin' | 'version' | 'pjson' | 'cacheDir' | 'configDir' | 'dataDir'>

/** What ends a run: an outcome to render, what a command returned (`value`), or anything thrown. */
export type RunResult = { outcome?: Outcome; value?: unknown; error?: unknown }

/**
 * The outputs and environment of an in-process run (`run(root, { io })`: a test, an embedder): the run writes
 * here instead of the process's stdout and stderr, reads `env` instead of `process.env`, installs no process
 * signal or error handler, and ends by resolving with its exit code instead of exiting the process.
 */
export type RunIo = {
  /** What the run prints on stdout, chunk by chunk, byte for byte what a process would print. */
  stdout(chunk: string | Uint8Array): void
  /** Human text for stderr (notes, `log` lines, text-format errors), secrets already scrubbed. */
  stderr(text: string): void
  /** The run's environment, read instead of `process.env` (the tool's settings, its dirs, `PATH` for hints). */
  env: Record<string, string | undefined>
  /** The script the run stands for, as `process.argv[1]` of a real one: every next-step hint starts with it. */
  script?: string | undefined
  /** Aborting it is a SIGINT to the run: the command's signal aborts, the run ends in `E_INTERRUPTED`. */
  signal?: AbortSignal | undefined
}

/** How {@link openSession} is started: the entry's own options. */
export type SessionOptions = {
  argv?: string[] | undefined
  interruptGraceMs?: number | undefined
  held?: HeldSignals | undefined
  /** An in-process run's outputs and environment; unset, the process's own. */
  io?: RunIo | undefined
}

/**
 * One run of a tool: the stdout guard,
 * SIGINT/SIGTERM and uncaught errors → one envelope, the tool's settings, catalogue, redaction keys and injected
 * token, the update notice, `<BIN>_FORMAT`, the run state commands read, and the one exit (render → audit → exit).
 */
export type Session = {
  readonly startedAt: number
  readonly signal: AbortSignal
  /** argv as the caller wrote it; {@link Session.argv} has the universal flags moved behind the command. */
  readonly rawArgv: readonly string[]
  argv: string[]
  readonly globals: Globals
  /** Read the tool's settings and set the run state; returns the tool's environment. */
  configure(config: SessionConfig): ToolEnv
  /** The command about to run: how its failure is printed (`schema_version`; NDJSON for a stream). */
  setShape(shape: { schemaVersion: string; stream: boolean }): void
  /** Throws the interruption when a signal already arrived: nothing starts after one. */
  stopIfInterrupted(): void
  /** Whether stdout is a terminal (an in-process run's never is). */
  readonly stdoutIsTTY: boolean
  /** Run `print` with stdout open to human text (help), written to the run's stdout. */
  printText(print: () => Promise<void>): Promise<void>
  /** Print a whole human text rendered before (a stored help): the bytes `printText` would have written. */
  printStored(text: string): Promise<void>
  /** End a run that printed its own output (help) with `code`, without an envelope. */
  end(code: number): Promise<number>
  /**
   * Render, audit, exit: the end of every run. Resolves with the exit code: an in-process run's, or the process's
   * once only its teardown is left (./exit.ts); a process cut by `process.exit` never settles it.
   */
  finish(result: RunResult): Promise<number>
}

/** Open the session of this process's run: from here on, every outcome leaves as exactly one envelope. */
export function openSession(options: SessionOptions = {}): Session {
  const startedAt = now()
  const { io } = options
  // What an earlier run in this process left (an in-process caller runs many): each run starts as a process does.
  const run = openRun()
  clearAudit()
  const callerState = getRunState()
  setRunState(undefined)
  resetRedaction()
  const callerEnv = setRunEnv(io?.env)
  const callerStderr = setRunStderr(io ? (text) => io.stderr(text) : undefined)
  // An in-process run sees the ended, empty stdin a child has: the caller's own (an MCP server's channel, a test
  // runner's) is never read by it, nor cached by oclif's parser (which fills a missing argument from stdin).
  const callerStdin = io ? isolateStdin() : undefined
  // An in-process run's stdout is its own sink: other writers of process.stdout are not this run's.
  if (!io) guardStdout()
  const sinks: OutputSinks | undefined = io && {
    stdout: async (chunk) => io.stdout(chunk),
    stderr: writeStderr,
    closed: () => false,
    isTTY: false,
  }
  // A process ends here; an in-process run resolves with the code, and gives its caller back what it had.
  const end = async (code: number): Promise<number> => {
    // The only place the process ends: every path comes here, through finish (or a second signal).
    if (!io) return exitProcess(code)
    // A run its caller gave up on, ending after another opened: what it found is no longer the caller's to get back.
    if (!isLatestRun(run)) return code
    setRunState(callerState)
    setRunEnv(callerEnv)
    setRunStderr(callerStderr)
    callerStdin?.()
    return code
  }
  // Made on first use: a run nobody interrupts and whose command never asks for its signal (most reads) does not
  // load Node's AbortController module (≈ 0.3 ms), which `node -e 0` never loads.
  let controller: AbortController | undefined
  const aborter = () => (controller ??= new AbortController())
  const rawArgv = options.argv ?? process.argv.slice(2)
  const argv = normalizeArgv(rawArgv)
  let globals: Globals = scanGlobals(argv)
  let catalogue: Catalogue = CORE_CATALOGUE
  let schemaVersion = '1.0'
  let stream = false
  const notices: RunState['notices'] = []
  let finished = false
  let interrupted = false

  const ctx = (): RenderContext => ({
    globals,
    catalogue,
    startedAt,
    notices,
    get signal() {
      return aborter().signal
    },
    ...(sinks ? { sinks } : {}),
  })
  const finish = async (result: RunResult): Promise<number> => {
    if (finished) return new Promise<number>(() => {})
    finished = true
    let code: number
    let resultCode = 'OK'
    try {
      const outcome =
        'value' in result
          ? isOutcome(result.value)
            ? result.value
            : dataOutcome(result.value ?? null, schemaVersion)
          : (result.outcome ?? (exitedCleanly(result.error) ? dataOutcome(null, schemaVersion) : undefined))
      if (outcome) {
        const rendering = ctx()
        code = await renderOutcome(outcome, rendering)
        if (rendering.failure) resultCode = rendering.failure
      } else {
        const error = toAgentError(interrupted ? aborter().signal.reason : thrown(result.error))
        debugStack(error)
        resultCode = error.code
        code = await renderError(error, ctx(), schemaVersion, stream)
      }
      // The pending record is this run's only while no later run has opened (see openRun).
      const audit = isLatestRun(run) ? pendingAudit() : undefined
      // Loaded only when a non-read command ran: read commands never pay for the audit module.
      if (audit)
        await (await import('../audit/writer.js')).appendAudit(audit, {
          result_code: resultCode,
          exit_code: code,
          duration_ms: Math.round(now() - startedAt),
        })
    } catch (renderFailure) {
      writeStderr(`agentcli: could not render the result: ${String(renderFailure)}\n`)
      code = 1
    }
    return end(code)
  }

  // The first signal asks the command to stop (its `signal` aborts; a stream stops at the next item) and gives it
  // a grace period; a second one answers at once. Either way the run ends in one E_INTERRUPTED envelope, unless
  // the renderer is already writing one (then only a stuck write is cut short).
  let graceMs = options.interruptGraceMs ?? 2000
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      if (finished) return void end(130)
      return void finish({ error: interruption(signal) })
    }
    interrupted = true
    writeStderr(`received ${signal}, stopping\n`)
    aborter().abort(interruption(signal))
    setTimeout(() => void finish({ error: interruption(signal) }), graceMs).unref()
  }
  if (io) {
    // Not the process's run: its signals and stray errors belong to the caller. The caller's abort is a SIGINT.
    if (io.signal?.aborted) onSignal('SIGINT')
    else io.signal?.addEventListener('abort', () => onSignal('SIGINT'), { once: true })
  } else {
    const onUncaught = (error: unknown) => void finish({ error })
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    process.on('uncaughtException', onUncaught)
    process.on('unhandledRejection', onUncaught)
    options.held?.release()
    const held = options.held?.first()
    if (held) onSignal(held)
  }

  return {
    startedAt,
    get signal() {
      return aborter().signal
    },
    rawArgv,
    argv,
    get globals() {
      return globals
    },
    // Asked only when needed: reading process.stdout creates it (see output/stdout.ts).
    get stdoutIsTTY() {
      return io ? false : Boolean(process.stdout.isTTY)
    },
    configure(config) {
      const env = toolEnv(config.bin)
      // Before anything is read from or written to them (the update notice, an audit line): oclif took these as given.
      for (const dir of ['CONFIG_DIR', 'DATA_DIR', 'CACHE_DIR'] as const) env.get(dir)
      const settings = readToolSettings(config)
      catalogue = defineErrorCodes(settings.errors)
      if (Array.isArray(settings.redact_keys)) addSensitiveKeys(settings.redact_keys as string[])
      // An injected token is a secret this process holds, whether or not the command ever reads it.
      registerSecret(env.raw('TOKEN'))
      const notice = readUpdateNotice(config.cacheDir, config.version)
      if (notice) notices.push(notice)
      globals = scanGlobals(this.argv, { name: env.name('FORMAT'), value: env.raw('FORMAT') })
      setRunState({
        globals,
        catalogue,
        get signal() {
          return aborter().signal
        },
        interrupted: () => interrupted,
        notices,
        bin: config.bin,
        script: io?.script,
        stdin: io ? { isTTY: false } : undefined,
        extendInterruptGrace: (ms) => {
          graceMs = Math.max(graceMs, ms)
        },
        lockTimeoutMs: () => lockTimeoutMsOf(config),
      })
      return env
    },
    setShape(shape) {
      schemaVersion = shape.schemaVersion
      stream = shape.stream
    },
    stopIfInterrupted() {
      if (interrupted) throw aborter().signal.reason
    },
    printText: (print) => (io ? withStdoutTo(io.stdout, print) : withRealStdout(print)),
    // Like help, not redacted; to descriptor 1 directly while nothing else asked for the stream (no stream stack).
    printStored: async (text) => (io ? io.stdout(text) : writeStdout(text, { whole: true })),
    end,
    finish,
  }
}

/**
 * `tool --version`: the tool and its version (text: one line). Anything after it but the universal flags is
 * `E_USAGE` naming it: `--version --bogus` and `--version list` are mistakes, not a version query.
 */
export function versionOutcome(config: SessionConfig, globals: Globals, rest: readonly string[] = []): Outcome {
  const extra = firstNonGlobal(rest)
  if (extra !== undefined)
    throw usageError(`--version takes no argument or flag but the universal ones (got: '${extra}')`, {
      got: extra,
      allowed: [...UNIVERSAL_FLAG_NAMES].map((name) => `--${name}`),
    })
  if (globals.format === 'text') return dataOutcome(`${config.bin} ${config.version}`, '1.0')
  return dataOutcome({ tool: config.bin, version: config.version }, '1.0')
}

/** The exit code of `this.exit()` (it throws an `EEXIT` error: `CommandExit`, or oclif's own from a plugin's command). */
function exitCodeOf(error: unknown): number | undefined {
  const exited = error as { code?: unknown; oclif?: { exit?: unknown } } | null
  if (typeof exited !== 'object' || exited === null || exited.code !== 'EEXIT') return undefined
  return typeof exited.oclif?.exit === 'number' ? exited.oclif.exit : undefined
}

/** A clean `this.exit(0)` is a success with no data. */
function exitedCleanly(error: unknown): boolean {
  return exitCodeOf(error) === 0
}

/** Any other exit is a tool bug, and so is a broken catalogue extension. */
function thrown(error: unknown): unknown {
  const code = exitCodeOf(error)
  if (code !== undefined)
    return new AgentError('E_INTERNAL', `command exited with ${code}; throw an AgentError instead`, {
      details: { exit_code: code },
    })
  if (error instanceof CatalogueDefinitionError) return new AgentError('E_INTERNAL', error.message, { cause: error })
  return error
}

function interruption(signal: NodeJS.Signals): AgentError {
  return new AgentError('E_INTERRUPTED', `interrupted by ${signal}`, { details: { signal } })
}

function debugStack(error: AgentError): void {
  if (!runEnv().DEBUG) return
  const cause = error.cause instanceof Error ? error.cause : error
  writeStderr(`${cause.stack ?? String(cause)}\n`)
}

/**
 * Help is oclif's, and oclif prints it with `console.log` (onto `process.stdout.write`): for an in-process run, both
 * are pointed at the run's stdout while help prints, and put back after (the only globals such a run touches).
 */
async function withStdoutTo(write: RunIo['stdout'], print: () => Promise<void>): Promise<void> {
  const stream = process.stdout
  const own = Object.getOwnPropertyDescriptor(stream, 'write')
  const log = console.log
  const { format } = builtin<typeof import('node:util')>('node:util')
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    write(chunk)
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined
    done?.()
    return true
  }) as typeof stream.write
  console.log = (...args: unknown[]) => write(`${format(...args)}\n`)
  try {
    await print()
  } finally {
    console.log = log
    if (own) Object.defineProperty(stream, 'write', own)
    else delete (stream as { write?: unknown }).write
  }
}

/** Put an ended, empty stdin in place of the process's own for an in-process run; returns the undo. */
function isolateStdin(): () => void {
  const caller = Object.getOwnPropertyDescriptor(process, 'stdin')
  const { Readable } = builtin<typeof import('node:stream')>('node:stream')
  // Made when the run first reads it (most never do), and then its own: an ended stream is never shared by two runs.
  const own = (value: unknown) => Object.defineProperty(process, 'stdin', { value, configurable: true, writable: true })
  Object.defineProperty(process, 'stdin', {
    configurable: true,
    get: () => own(Readable.from([])).stdin,
    set: own,
  })
  return () => {
    if (caller) Object.defineProperty(process, 'stdin', caller)
  }
}
