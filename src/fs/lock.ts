import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { AgentError } from '../errors/agent-error.js'

/** Options of {@link withFileLock}. */
export type LockOptions = { timeoutMs?: number; staleMs?: number }

/**
 * Run `fn` holding an exclusive cross-process lock on `path` (a `path.lock` directory, with stale-lock recovery),
 * so read-modify-write of a shared file is safe when several processes run at once.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const { timeoutMs = 10_000, staleMs = 10_000 } = options
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  // Loaded on first lock: read-only commands never pay for it.
  const { default: lockfile } = await import('proper-lockfile')
  let release: () => Promise<void>
  try {
    release = await lockfile.lock(path, {
      stale: staleMs,
      realpath: false,
      retries: { retries: Math.ceil(timeoutMs / 25), minTimeout: 10, maxTimeout: 50, factor: 1.2 },
    })
  } catch (error) {
    throw new AgentError('E_TIMEOUT', `timed out waiting for the lock on ${path}`, { details: { path }, cause: error })
  }
  try {
    return await fn()
  } finally {
    await release().catch(() => {})
  }
}
