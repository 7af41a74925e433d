import { builtin } from './builtin.js'

/**
 * The child side of `tool mcp`'s warm processes (src/mcp/pool.ts): a tool process started ahead of a call, its
 * bundle already evaluated, that waits on its IPC channel for the one call it will run, then runs it exactly as a
 * cold start would (the same `run()`, the same argv in `process.argv`) and exits. Nothing of a call outlives it:
 * every process serves one call.
 */

/**
 * The one argument that asks a start to wait for its call. Honoured only as the sole argument of a process that
 * has an IPC channel to its parent (only a parent that spawned it with one can send the call); anywhere else it
 * is an ordinary unknown argument, which the run refuses as any other (`E_USAGE`). Never an environment variable:
 * the environment is inherited by whatever a command starts, an argument is not.
 */
export const WARM_FLAG = '--agentcli-warm-process'

/** The message a warm process sends once it is ready (its code loaded), and the one it waits for. */
export const WARM_MESSAGE = { ready: 'agentcli:warm-ready', call: 'agentcli:warm-call' } as const

/** The call a warm process is handed: the argv a cold start would get, and the environment it would have on top. */
export type WarmCall = { type: typeof WARM_MESSAGE.call; argv: string[]; env: Record<string, string> }

type Ipc = {
  send?: (message: unknown) => boolean
  channel?: unknown
  connected?: boolean
  disconnect?: () => void
}

/**
 * Whether this process is a warm process: its only argument is {@link WARM_FLAG} and it has an IPC channel to the
 * parent that started it (Node opens one only for a parent that asked for it, and removes its descriptor from the
 * environment at start, so a command's own children never inherit it). A `tool <word>` run never waits.
 */
export function isWarmProcess(argv: readonly string[] = process.argv, proc: Ipc = process as Ipc): boolean {
  return (
    argv.length === 3 &&
    argv[2] === WARM_FLAG &&
    typeof proc.send === 'function' &&
    proc.channel !== undefined &&
    proc.connected === true
  )
}

/** Whether a message is a well-formed call: an argv of strings and an environment of string values. */
export function isWarmCall(message: unknown): message is WarmCall {
  const m = message as Partial<WarmCall> | null
  if (!m || typeof m !== 'object' || m.type !== WARM_MESSAGE.call) return false
  if (!Array.isArray(m.argv) || !m.argv.every((a) => typeof a === 'string')) return false
  const env = m.env as unknown
  if (!env || typeof env !== 'object' || Array.isArray(env)) return false
  return Object.values(env).every((v) => typeof v === 'string')
}

/**
 * Say ready, then wait for the first message: a call resolves with it, and the channel closes (a second message is
 * never read, and the command runs with no channel, as a cold start does). Anything else (the
 * parent closed the channel: it stopped the pool or died; a message that is not a call) resolves `undefined`:
 * the process has nothing to run and must end.
 */
export function awaitCall(proc: NodeJS.Process = process): Promise<WarmCall | undefined> {
  return new Promise((resolve) => {
    // Closed while the code loaded: the 'disconnect' event may be past already.
    if (!proc.connected) return resolve(undefined)
    const onMessage = (message: unknown) => {
      proc.off('disconnect', onDisconnect)
      // Closed on the next turn, not inside this handler: Node delivers a message already read (a second one) on a
      // tick, and reads the channel it was closed under. With no listener left, that one is dropped unseen.
      setImmediate(() => {
        if (proc.connected) proc.disconnect()
      })
      resolve(isWarmCall(message) ? message : undefined)
    }
    const onDisconnect = () => {
      proc.off('message', onMessage)
      resolve(undefined)
    }
    proc.once('message', onMessage)
    proc.once('disconnect', onDisconnect)
    proc.send?.({ type: WARM_MESSAGE.ready })
  })
}

/**
 * Become the cold start of `call`: its arguments are this process's (everything that reads `process.argv`, the
 * code cache's key included, sees what a cold start of it would), its environment on top of the one the pool
 * started the process with.
 */
export function applyCall(call: WarmCall, proc: NodeJS.Process = process): void {
  proc.argv = [...proc.argv.slice(0, 2), ...call.argv]
  for (const [key, value] of Object.entries(call.env)) proc.env[key] = value
}

/**
 * Close stdout and stderr as the very last step of the exit, after every `exit` listener (the audit is written
 * before the exit, the code cache and lock releases in listeners): the server reads the call's output to its end at
 * once instead of after the kernel has torn the process down (some 10 to 20 ms of a warm call). Both ways a process
 * ends, its loop ending and `process.exit` (src/runtime/exit.ts), emit `exit` through `process.emit`, so that is
 * where the streams are closed, once the listeners ran; a signal's death closes them anyway. Warm processes only.
 */
export function closeStdioAtExit(
  proc: { emit(event: string | symbol, ...args: unknown[]): boolean } = process,
  close: (fd: number) => void = builtin<typeof import('node:fs')>('node:fs').closeSync,
): void {
  const emit = proc.emit
  if (typeof emit !== 'function') return
  let closed = false
  proc.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
    const handled = emit.call(this, event, ...args)
    if (event === 'exit' && !closed) {
      closed = true
      for (const fd of [1, 2])
        try {
          close(fd)
        } catch {
          // Already closed: nothing more to tell the parent.
        }
    }
    return handled
  }
}
