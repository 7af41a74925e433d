import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { beforeChange } from '../errors/before-change.js'

/** Options of {@link withFileLock}. */
export type LockOptions = { timeoutMs?: number; staleMs?: number }

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

/**
 * Run `fn` holding an exclusive cross-process lock on `path` (a `path.lock` directory, with stale-lock recovery),
 * so read-modify-write of a shared file is safe when several processes run at once. Only a lock that someone
 * holds is waited for; a directory that cannot hold a lock (read-only, full, not a directory) is `E_IO` at once.
 * Either failure comes before `fn` ran, so it is marked as preceding any change.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const { timeoutMs = 10_000, staleMs = 10_000 } = options
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  } catch (error) {
    throw beforeChange(ioError(path, error))
  }
  // Loaded on first lock: read-only commands never pay for it.
  const { default: lockfile } = await import('proper-lockfile')
  const deadline = Date.now() + timeoutMs
  let release: () => Promise<void>
  for (let wait = 10; ; wait = Math.min(50, Math.ceil(wait * 1.2))) {
    try {
      release = await lockfile.lock(path, { stale: staleMs, realpath: false, retries: 0 })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw beforeChange(ioError(path, error))
      if (Date.now() >= deadline) {
        throw beforeChange(
          new AgentError('E_TIMEOUT', `timed out waiting for the lock on ${path}`, { details: { path }, cause: error }),
        )
      }
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
  try {
    return await fn()
  } finally {
    await release().catch(() => {})
  }
}
