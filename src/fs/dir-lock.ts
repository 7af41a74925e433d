import { mkdirSync, rmdirSync, type Stats, statSync, utimesSync } from 'node:fs'

/** A lock directory this process holds. */
export type DirLock = { release(): void }

type Identity = Pick<Stats, 'dev' | 'ino' | 'birthtimeMs'>

/** A breaker older than this was left by a process killed while breaking a stale lock. */
const BREAKER_STALE_MS = 5_000
/** Locks held by this process: removed if it exits while holding them (a signal, a deadline). */
const held = new Map<string, Identity>()
let exitHookSet = false

const same = (a: Identity, b: Identity) => a.dev === b.dev && a.ino === b.ino && a.birthtimeMs === b.birthtimeMs
const code = (error: unknown) => (error as NodeJS.ErrnoException).code

function statOrNone(path: string): Stats | undefined {
  try {
    return statSync(path)
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined
    throw error
  }
}

/** Remove the lock directory `dir` if it is still the one `id` names (not one another process took since). */
function removeIfOurs(dir: string, id: Identity): void {
  try {
    const now = statSync(dir)
    if (same(now, id)) rmdirSync(dir)
  } catch {
    // Gone already.
  }
}

function onExit(): void {
  for (const [dir, id] of held) removeIfOurs(dir, id)
}

/**
 * Try once to take the lock directory `dir` (mkdir(2) is atomic: one process creates it). The holder refreshes its
 * mtime every `staleMs / 2`; a lock whose mtime is older than `staleMs` was left by a dead process and is broken
 * (under a breaker directory, so two waiters never both remove it: one could remove the lock the other has just
 * taken). The on-disk protocol is proper-lockfile's, so tools built on an older agentcli exclude each other too.
 * Returns undefined when someone holds it; filesystem errors throw (ENOENT: the parent is missing).
 *
 * Synchronous system calls: uncontended, taking and releasing the lock is four of them, cheaper than the
 * thread-pool round trips of asynchronous calls.
 */
export function tryDirLock(dir: string, staleMs: number): DirLock | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(dir)
    } catch (error) {
      if (code(error) !== 'EEXIST') throw error
      if (breakIfStale(dir, staleMs)) continue
      return undefined
    }
    return hold(dir, statSync(dir), staleMs)
  }
  return undefined
}

function hold(dir: string, id: Identity, staleMs: number): DirLock {
  if (!exitHookSet) {
    exitHookSet = true
    process.once('exit', onExit)
  }
  held.set(dir, id)
  // Keep the lock fresh while the work runs; unref'd, so it never holds the process open.
  const refresh = setInterval(
    () => {
      try {
        if (same(statSync(dir), id)) utimesSync(dir, new Date(), new Date())
      } catch {
        // Removed under us: release will find it gone.
      }
    },
    Math.max(1_000, staleMs / 2),
  )
  refresh.unref()
  return {
    release() {
      clearInterval(refresh)
      held.delete(dir)
      // Only our own lock: had it been broken as stale (a frozen process), the new holder's stays.
      removeIfOurs(dir, id)
    },
  }
}

/** Remove the lock `dir` if it is stale; true when it is gone (broken, or released meanwhile). */
function breakIfStale(dir: string, staleMs: number): boolean {
  const seen = statOrNone(dir)
  if (!seen) return true
  if (seen.mtimeMs >= Date.now() - staleMs) return false
  const breaker = `${dir}.break`
  try {
    mkdirSync(breaker)
  } catch (error) {
    if (code(error) !== 'EEXIST') throw error
    const age = Date.now() - (statOrNone(breaker)?.mtimeMs ?? Date.now())
    if (age > BREAKER_STALE_MS) removeQuietly(breaker)
    return false
  }
  try {
    // Still the same stale lock, not one a waiter that broke it first has taken since?
    const again = statOrNone(dir)
    if (again && same(again, seen) && again.mtimeMs === seen.mtimeMs) removeQuietly(dir)
  } finally {
    removeQuietly(breaker)
  }
  return true
}

function removeQuietly(dir: string): void {
  try {
    rmdirSync(dir)
  } catch {
    // Someone else removed it, or it is not ours to remove (not empty).
  }
}
