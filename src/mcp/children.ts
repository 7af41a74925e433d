import type { ChildProcess } from 'node:child_process'
import { signalGroup } from '../runtime/process-group.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { integerSetting } from '../settings/package-section.js'
import { openPools } from './pool.js'

/**
 * How long a call's processes have to wind down after SIGINT/SIGTERM before SIGKILL: longer than the CLI's own
 * interrupt grace (2 s), so a call that stops as asked still prints its `E_INTERRUPTED` envelope.
 */
export const KILL_GRACE_MS = 5000

/** The bounds of `kill_grace_ms`: 0 kills at once (no `E_INTERRUPTED` from the call); a minute is already a hang. */
const KILL_GRACE_BOUNDS = { min: 0, max: 60_000 } as const

/**
 * The grace the tool's author set in package.json (`"agentcli": {"mcp": {"kill_grace_ms": n}}`), checked; unset is
 * {@link KILL_GRACE_MS}. Only package.json sets it: how long a stopped call may linger is the tool's decision.
 */
export function killGraceOf(config: ToolConfig): number {
  return integerSetting(config, {
    section: 'mcp',
    key: 'kill_grace_ms',
    fallback: KILL_GRACE_MS,
    ...KILL_GRACE_BOUNDS,
    unit: 'milliseconds',
  })
}

const live = new Map<ChildProcess, Promise<void> | undefined>()
/** Each call's grace, set when it is tracked: every later stop of it (a cancel, the server stopping) uses it. */
const graces = new WeakMap<ChildProcess, number>()
let hooked = false

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/**
 * Follow a call's process until it exits; whatever is left when the server exits is killed. `graceMs` is how long
 * a stop of it waits before SIGKILL ({@link killGraceOf}).
 */
export function track(child: ChildProcess, graceMs = KILL_GRACE_MS): void {
  graces.set(child, graceMs)
  live.set(child, undefined)
  child.once('exit', () => live.delete(child))
  if (hooked) return
  hooked = true
  // The last word, however the server ends (a second signal exits at once): no call outlives it.
  process.on('exit', () => {
    for (const c of live.keys()) signalGroup(c, 'SIGKILL')
  })
}

/** Whether a call is being stopped (a cancel, a cut stream, the server stopping): its answer waits for its exit. */
export function stopping(child: ChildProcess): boolean {
  return live.get(child) !== undefined
}

/**
 * Stop one call: `signal` to its process group, SIGKILL once the grace is over, and SIGKILL again for what is
 * left of the group when the call's own process is gone (a grandchild that ignored the first signal). Resolves
 * when the call's process has exited; asking again returns the same stop.
 */
export function stop(
  child: ChildProcess,
  signal: NodeJS.Signals,
  graceMs = graces.get(child) ?? KILL_GRACE_MS,
): Promise<void> {
  if (exited(child) || child.pid === undefined) return Promise.resolve()
  const pending = live.get(child)
  if (pending) return pending
  const stopping = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      process.stderr.write(`mcp: pid ${child.pid} still running ${graceMs} ms after ${signal}: SIGKILL\n`)
      signalGroup(child, 'SIGKILL')
    }, graceMs)
    child.once('exit', () => {
      clearTimeout(timer)
      signalGroup(child, 'SIGKILL')
      resolve()
    })
  })
  live.set(child, stopping)
  signalGroup(child, signal)
  return stopping
}

/**
 * Stop every call still running (the client went away, or the server was told to stop); resolves when all exited.
 * The warm processes waiting for a call (src/mcp/pool.ts) end too, and none is started again: they ran nothing, so
 * their channel closes rather than a signal (`count` is of calls only).
 */
export function stopAll(signal: NodeJS.Signals): { count: number; done: Promise<void> } {
  const idle = openPools().map((pool) => pool.close())
  const children = [...live.keys()].filter((c) => !exited(c))
  return {
    count: children.length,
    done: Promise.all([...children.map((c) => stop(c, signal)), ...idle]).then(() => undefined),
  }
}
