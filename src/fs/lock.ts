import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { beforeChange } from '../errors/before-change.js'
import { stopIfInterrupted } from '../errors/interrupted.js'
import { runLockTimeoutMs } from '../runtime/run-io.js'
import { DEFAULT_LOCK_TIMEOUT_MS } from '../settings/lock-wait.js'
import { type DirLock, tryDirLock } from './dir-lock.js'
import { checkStateDir } from './state-file.js'

/** Options of {@link withFileLock}. */
export type LockOptions = {
  /**
   * How long to wait for a lock someone else holds before `E_TIMEOUT` (default: the tool's
   * `"agentcli": {"locks": {"timeout_ms": n}}` in package.json, else 10 000 ms).
   */
  timeoutMs?: number
  /** After how long a held lock is taken as left by a dead process and broken (default 10 000 ms, at least 2 000). */
  staleMs?: number
  /** The run's signal (`this.signal`): a wait for a held lock stops with `E_INTERRUPTED` once it aborts. */
  signal?: AbortSignal
}

function ioError(path: string, error: unknown): AgentError {
  const code = (error as NodeJS.ErrnoException).code ?? String(error)
  return new AgentError('E_IO', `cannot lock ${path}: ${code}`, {
    details: {
      path,
      fix: `make ${dirname(path)} a writable directory with free space (it is read-only, full, missing or not a directory)`,
    },
    cause: error,
  })
}

/** One attempt; the directory is created (0700) only when it is missing, so the common case is one mkdir. */
function attempt(path: string, staleMs: number): DirLock | undefined {
  // A lock in a linked or foreign directory would guard the link's target, not the tool's own state.
  checkStateDir(dirname(path))
  try {
    return tryDirLock(`${path}.lock`, staleMs)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  return tryDirLock(`${path}.lock`, staleMs)
}

/**
 * Run `fn` holding an exclusive cross-process lock on `path` (a `path.lock` directory, with stale-lock recovery),
 * so read-modify-write of a shared file is safe when several processes run at once. Only a lock that someone
 * holds is waited for (polling from 10 ms up to 50 ms; uncontended there is no wait at all); a directory that
 * cannot hold a lock (read-only, full, not a directory) is `E_IO` at once. Either failure comes before `fn` ran,
 * so it is marked as preceding any change; so is the `E_INTERRUPTED` of a wait that a signal stops.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const { staleMs = 10_000, signal } = options
  let timeoutMs: number
  try {
    timeoutMs = options.timeoutMs ?? runLockTimeoutMs() ?? DEFAULT_LOCK_TIMEOUT_MS
  } catch (error) {
    throw beforeChange(error)
  }
  const deadline = Date.now() + timeoutMs
  let lock: DirLock | undefined
  for (let wait = 10; ; wait = Math.min(50, Math.ceil(wait * 1.2))) {
    try {
      lock = attempt(path, Math.max(2_000, staleMs))
    } catch (error) {
      throw beforeChange(error instanceof AgentError ? error : ioError(path, error))
    }
    if (lock) break
    stopIfInterrupted(signal)
    if (Date.now() >= deadline) {
      throw beforeChange(
        new AgentError('E_TIMEOUT', `timed out waiting for the lock on ${path}`, { details: { path } }),
      )
    }
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
  try {
    return await fn()
  } finally {
    lock.release()
  }
}
