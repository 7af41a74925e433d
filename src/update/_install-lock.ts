import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { tryPidLock } from '../fs/pid-lock.js'

const POLL_MS = 100

/**
 * Run `fn` as the only update of the install at `root` (`<root>/update.lock`, naming the holder's PID and start
 * time). Another update waits for it; a lock left by a killed update is taken over at once. Waiting longer than
 * `waitMs` is `E_TIMEOUT` (retryable), and cancellation while waiting is honoured.
 */
export async function withInstallLock<T>(
  root: string,
  options: { waitMs: number; signal: AbortSignal },
  fn: () => Promise<T>,
): Promise<T> {
  const path = join(root, 'update.lock')
  const deadline = Date.now() + options.waitMs
  for (;;) {
    if (options.signal.aborted) throw options.signal.reason
    let lock: Awaited<ReturnType<typeof tryPidLock>>
    try {
      lock = await tryPidLock(path)
    } catch (error) {
      throw new AgentError('E_IO', `cannot take the update lock ${path}: ${(error as NodeJS.ErrnoException).code}`, {
        details: { path, stage: 'lock' },
        cause: error,
      })
    }
    if ('release' in lock) {
      try {
        return await fn()
      } finally {
        await lock.release()
      }
    }
    if (Date.now() > deadline)
      throw new AgentError('E_TIMEOUT', `another update of this install is still running (pid ${lock.held_by?.pid})`, {
        details: { stage: 'lock', path, holder_pid: lock.held_by?.pid ?? null, waited_ms: options.waitMs },
      })
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
