import { join } from 'node:path'
import { BUNDLE_FILE } from '../boot/bundle-file.js'
import type { CommandDescription } from '../describe/command.js'
import { AgentError } from '../errors/agent-error.js'
import { setRunStderr } from '../output/stderr.js'
import { run } from '../runtime/entry.js'
import { getRunState, setRunState } from '../runtime/run-state.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'
import { setRunEnv } from '../settings/run-env.js'
import { KILL_GRACE_MS } from './children.js'

/** Whether `tool mcp` runs read calls in its own process unless the tool's author says otherwise: off until it has passed the robustness tests of processes (see docs/mcp.md). */
export const DEFAULT_IN_PROCESS_READS = false

/** Whether the tool's author lets `tool mcp` run reads in its process (`"agentcli": {"mcp": {"in_process_reads": b}}`), checked. */
export function inProcessReadsOf(config: ToolConfig): boolean {
  const mcp = readToolSettings(config).mcp as { in_process_reads?: unknown } | undefined
  const got = mcp?.in_process_reads
  if (got === undefined) return DEFAULT_IN_PROCESS_READS
  if (typeof got === 'boolean') return got
  throw new AgentError('E_CONFIG', 'agentcli.mcp.in_process_reads in package.json must be true or false', {
    details: { setting: 'agentcli.mcp.in_process_reads', allowed: [true, false], got },
  })
}

/**
 * Whether a command may run in the server's process: a plain read, answering one envelope. A stream (its items
 * are cut by stopping a process), an async command (a job's worker is a process), a raw one and `mcp` itself
 * (it serves a protocol on stdio) always run as a process, as does every `local` or `write` command (audited,
 * prompting, holding state): their isolation is a process of their own.
 */
export function runsInProcess(desc: Pick<CommandDescription, 'type' | 'stream' | 'async' | 'raw'>): boolean {
  return desc.type === 'read' && !desc.stream && !desc.async && !desc.raw
}

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
   * then the caller's).
   */
  run(argv: readonly string[], env: Record<string, string>, signal?: AbortSignal): Promise<InProcessResult | undefined>
  /** Whether a call outlived its grace: no call runs in this process again. */
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
      const running = run(config.root, {
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
      }).then(
        (code) => code as number | null,
        // run() answers everything with an envelope; anything still escaping it is the E_INTERNAL a child's crash is.
        (error: unknown) => {
          stderr += `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
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
      const ended = await Promise.race([running, hung])
      clearTimeout(timer)
      settled = true
      if (ended === 'hung') {
        dead = true
        process.stderr.write(
          `mcp: an in-process call (${argv.join(' ')}) still running ${graceMs} ms after it was cancelled: every later call starts a process\n`,
        )
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
