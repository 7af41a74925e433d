import { spawn } from 'node:child_process'
import { OWN_GROUP, signalGroup } from '../runtime/process-group.js'
import { runEnv } from '../settings/run-env.js'

/** How a bounded child process ended. */
export type ChildResult = { code: number | null; stdout: string; stderr: string; timed_out: boolean }

const KEEP = 64 * 1024

/**
 * Run a command with a deadline. The child gets its own process group so that on timeout or cancellation the
 * whole group it started (npm and its scripts, the smoke run of a new version and whatever it spawned) is
 * killed, never anything else; when the child exits, whatever it left running in its group is ended with it.
 * Output is capped in memory.
 */
export function runBounded(
  command: string,
  args: readonly string[],
  options: { timeoutMs: number; signal?: AbortSignal | undefined; env?: NodeJS.ProcessEnv; cwd?: string },
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(options.signal.reason)
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: OWN_GROUP,
      // The run's environment: an in-process run's PATH finds its npm, and its smoke run sees its HOME.
      env: options.env ?? runEnv(),
      ...(options.cwd ? { cwd: options.cwd } : {}),
    })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    let settled = false
    child.stdout.on('data', (c: Buffer) => {
      if (stdout.length < KEEP) stdout += c.toString('utf8')
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-KEEP)
    })
    const killGroup = () => signalGroup(child, 'SIGKILL')
    const timer = setTimeout(() => {
      timedOut = true
      killGroup()
    }, options.timeoutMs)
    const onAbort = () => killGroup()
    options.signal?.addEventListener('abort', onAbort, { once: true })
    const done = (fn: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      fn()
    }
    const finish = (code: number | null) =>
      done(() =>
        options.signal?.aborted && !timedOut
          ? reject(options.signal.reason)
          : resolve({ code, stdout, stderr, timed_out: timedOut }),
      )
    child.on('error', (error) => done(() => reject(error)))
    child.on('close', finish)
    child.on('exit', (code) => {
      // What the child left behind in its group (a daemon it forked, a stuck grandchild) does not outlive it.
      killGroup()
      // A grandchild outside the group may hold the pipes open after the child exits: do not wait for it long.
      setTimeout(() => finish(code), 500).unref()
    })
  })
}
