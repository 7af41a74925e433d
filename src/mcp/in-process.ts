import { join } from 'node:path'
import { BUNDLE_FILE } from '../boot/bundle-file.js'
import { setRunStderr } from '../output/stderr.js'
import { run } from '../runtime/entry.js'
import { getRunState, setRunState } from '../runtime/run-state.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { setRunEnv } from '../settings/run-env.js'
import { KILL_GRACE_MS } from './children.js'
import { guardedRun, type RunFault } from './in-process-guard.js'
import { loggedArgv } from './logging.js'

/** What one in-process call printed, as a process's stdout and stderr would have it, and its exit code. */
export type InProcessResult = { stdout: string; stderr: string; exitCode: number | null }

/**
 * The server's own runner of read calls: the tool's `run(root, { io })` in this process, one call at a time (the
 * run's module state, its environment and run state, is process-wide). `take` says whether a call may have it now:
 * a call that finds it busy, or broken, goes to a process instead, never waits.
 */
export type InProcessRunner = {
  /** Claim the runner for one call: false while another call holds it, or once it is broken. */
  take(): boolean
  /**
   * Run `argv` (the runner must have been taken) with `env` and `signal`: resolves with what it printed. A run
   * that did not end within the grace after `signal` aborted breaks the runner (every later call starts a
   * process): it resolves with what the run printed by then, or `undefined` when nothing (the call's answer is
   * then the caller's). So does one that calls `process.exit` (its code is the exit code) or leaves an uncaught
   * error (exit code null): the server goes on.
   */
  run(argv: readonly string[], env: Record<string, string>, signal?: AbortSignal): Promise<InProcessResult | undefined>
  /** Whether a run outlived its grace, exited or left an uncaught error: no call runs in this process again. */
  broken(): boolean
}

/**
 * The runner of a server whose tool is `config`, started as `script` (what a child's `process.argv[1]` is: every
 * next-step hint starts with it). The tool's command modules are this process's own: from its bundle when the
 * server runs from it (its package.json then names the bundle as the command target), else its modules.
 */
export function inProcessRunner(
  config: ToolConfig,
  script: string | undefined,
  graceMs = KILL_GRACE_MS,
): InProcessRunner {
  const bundlePath = join(config.root, BUNDLE_FILE)
  const target = (config.pjson.oclif as { commands?: { target?: unknown } } | undefined)?.commands?.target
  const bundle = typeof target === 'string' && join(config.root, target) === bundlePath ? bundlePath : undefined
  let busy = false
  let dead = false
  // No call runs in this process again: the server says so once, with what the run did (its argv scrubbed).
  const broke = (argv: readonly string[], what: string) => {
    dead = true
    process.stderr.write(`mcp: an in-process call (${loggedArgv(argv)}) ${what}: every later call starts a process\n`)
  }
  return {
    take() {
      if (busy || dead) return false
      busy = true
      return true
    },
    broken: () => dead,
    async run(argv, env, signal) {
      // The run gives the server its run state, environment, stderr and stdin back when it ends (the session's
      // in-process mode, which also hands the run an ended stdin, never the MCP channel); a run abandoned below
      // has not ended, so the server takes them back itself. (No audit draft to keep: `mcp` is a read.)
      const state = getRunState()
      const stdin = Object.getOwnPropertyDescriptor(process, 'stdin')
      const out: Buffer[] = []
      let stderr = ''
      let settled = false
      const takeBack = () => {
        if (stdin) Object.defineProperty(process, 'stdin', stdin)
        setRunEnv(undefined)
        setRunStderr(undefined)
        setRunState(state)
      }
      // A run that calls process.exit, or leaves an error nothing catches, ends there, and only that run: the call is
      // answered as the process it would have had ends, and every later call starts a process (the run's state is
      // not known to be sound). A fault after its answer (a timer it left) only does the latter.
      let onFault: (fault: RunFault) => void = () => {}
      const faulted = new Promise<RunFault>((resolve) => {
        onFault = (fault) => {
          if (!settled) {
            settled = true
            return resolve(fault)
          }
          if (!dead) broke(argv, 'left an uncaught error after its answer')
        }
      })
      const running = guardedRun(
        (fault) => onFault(fault),
        () =>
          run(config.root, {
            argv: [...argv],
            ...(bundle ? { bundle } : {}),
            io: {
              stdout: (chunk) => {
                if (!settled) out.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk))
              },
              stderr: (text) => {
                if (!settled && stderr.length < 64 * 1024) stderr += text
              },
              env,
              script,
              signal,
            },
          }),
      ).then(
        (code) => code as number | null,
        // run() answers everything with an envelope; anything still escaping it is the E_INTERNAL a child's crash is.
        (error: unknown) => {
          stderr += `${stackOf(error)}\n`
          return null
        },
      )
      // A run that does not end within the grace once its call was cancelled is never waited for: the call is
      // answered without it, and this process runs no other call (its module state is that run's until it ends).
      let timer: NodeJS.Timeout | undefined
      const hung = new Promise<'hung'>((resolve) => {
        const arm = () => {
          timer = setTimeout(() => resolve('hung'), graceMs)
          timer.unref()
        }
        if (signal?.aborted) arm()
        else signal?.addEventListener('abort', arm, { once: true })
      })
      const ended = await Promise.race([running, hung, faulted])
      clearTimeout(timer)
      settled = true
      if (ended !== null && typeof ended === 'object') {
        const exited = 'exit' in ended
        broke(argv, exited ? `called process.exit(${ended.exit})` : 'raised an uncaught error')
        takeBack()
        if (!exited) stderr += `uncaught in the server's process: ${stackOf(ended.error)}\n`
        return { stdout: Buffer.concat(out).toString('utf8'), stderr, exitCode: exited ? ended.exit : null }
      }
      if (ended === 'hung') {
        broke(argv, `still running ${graceMs} ms after it was cancelled`)
        // The server's own state back now: the abandoned run's output goes nowhere, and it is never waited for.
        takeBack()
        // What it printed by then is its answer: a run whose command ignores its signal prints its E_INTERRUPTED at
        // the end of its own grace, as a process would, but its promise waits for the command (a process exits).
        const printed = Buffer.concat(out).toString('utf8')
        return printed === '' ? undefined : { stdout: printed, stderr, exitCode: null }
      }
      busy = false
      return { stdout: Buffer.concat(out).toString('utf8'), stderr, exitCode: ended }
    },
  }
}

function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error)
}
