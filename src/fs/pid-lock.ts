import { randomBytes } from 'node:crypto'
import { link, mkdir, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { isAlive, pidExists, processIdentity } from '../jobs/liveness.js'

/** Who holds a PID lock: the process (PID and start time) and a nonce naming this one acquisition. */
export type LockHolder = { pid: number; start: string | null; nonce: string }

/** A lock this process holds; `release` removes it only while it is still this acquisition's. */
export type HeldLock = { path: string; holder: LockHolder; release(): Promise<void> }

/** A breaker older than this was left by a process killed while breaking a stale lock. */
const BREAKER_STALE_MS = 5_000
/** A publishing temp file lives for microseconds; one older than this was left by a killed process. */
const TEMP_STALE_MS = 10_000

/**
 * Remove what killed processes left next to the lock at `path`: publishing temp files whose writer is gone or
 * that are old enough to be nobody's, and breakers that are. Safe while others wait for the lock.
 */
export async function clearLockDebris(path: string): Promise<void> {
  const dir = dirname(path)
  const prefix = `${basename(path)}.`
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue
    const age = await stat(join(dir, name)).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    )
    const limit = name === `${prefix}break` ? BREAKER_STALE_MS : TEMP_STALE_MS
    // A publishing temp file names its writer: one whose writer is gone is debris at once, whatever its age. One cut
    // short as it was written (killed inside writeFile) still names its writer's PID in its file name (a reused PID keeps
    // it until its age clears it).
    const writer = name === `${prefix}break` ? undefined : await readLockHolder(join(dir, name))
    const namedPid = writer ? undefined : writerPid(name.slice(prefix.length))
    const orphan = writer ? !isAlive(writer.pid, writer.start) : namedPid !== undefined && !pidExists(namedPid)
    if (age > limit || orphan) await rm(join(dir, name), { recursive: true, force: true })
  }
}

/** The PID in a publishing temp file's name (`<lock>.<pid>-<nonce>`), if the name has one. */
function writerPid(suffix: string): number | undefined {
  const match = /^(\d+)-[0-9a-f]+$/.exec(suffix)
  return match ? Number(match[1]) : undefined
}

/** The holder named in a lock file, if it names one. */
export async function readLockHolder(path: string): Promise<LockHolder | undefined> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as LockHolder
    return Number.isInteger(value.pid) && value.pid > 0 && typeof value.nonce === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** Publish the holder file with link(2): it appears complete or not at all, and only one process wins. */
async function publish(path: string, holder: LockHolder): Promise<boolean> {
  const temp = `${path}.${holder.pid}-${holder.nonce}`
  await writeFile(temp, JSON.stringify(holder), { mode: 0o600 })
  try {
    await link(temp, path)
    return true
  } catch (error) {
    // ENOENT: a cleanup removed the temp file under us; like EEXIST, just not acquired this time.
    if (['EEXIST', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) return false
    throw error
  } finally {
    await unlink(temp).catch(() => {})
  }
}

/**
 * Remove a lock whose holder is dead (killed while holding it), under a breaker directory so two waiters never
 * both remove it — one of them could otherwise remove the lock the other has just taken.
 */
async function breakIfDead(path: string): Promise<void> {
  const holder = await readLockHolder(path)
  if (holder && isAlive(holder.pid, holder.start)) return
  const breaker = `${path}.break`
  try {
    await mkdir(breaker)
  } catch {
    const age = await stat(breaker).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    )
    if (age > BREAKER_STALE_MS) await rm(breaker, { recursive: true, force: true })
    return
  }
  try {
    const again = await readLockHolder(path)
    if (again?.nonce === holder?.nonce && !(again && isAlive(again.pid, again.start)))
      await unlink(path).catch(() => {})
  } finally {
    await rm(breaker, { recursive: true, force: true })
  }
}

/**
 * Try once to take an exclusive lock file naming this process (PID and start time). A lock left by a process
 * that died is taken over at once; a lock held by a live process is not, and its holder is returned instead.
 * Filesystem errors propagate (the caller names the path).
 */
export async function tryPidLock(path: string): Promise<HeldLock | { held_by: LockHolder | undefined }> {
  const holder: LockHolder = {
    pid: process.pid,
    start: processIdentity(process.pid),
    nonce: randomBytes(8).toString('hex'),
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await publish(path, holder)) {
      return {
        path,
        holder,
        async release() {
          if ((await readLockHolder(path))?.nonce === holder.nonce) await unlink(path).catch(() => {})
        },
      }
    }
    await breakIfDead(path)
  }
  return { held_by: await readLockHolder(path) }
}
