import { randomBytes } from 'node:crypto'
import { link, mkdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { isAlive, processIdentity } from '../jobs/liveness.js'

type Holder = { pid: number; start: string | null; nonce: string }

const POLL_MS = 100
/** A breaker older than this was left by a process killed while breaking a stale lock. */
const BREAKER_STALE_MS = 5_000

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as Holder
    return Number.isInteger(value.pid) && value.pid > 0 && typeof value.nonce === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** Publish the holder file with link(2): it appears complete or not at all, and only one process wins. */
async function tryCreate(path: string, holder: Holder): Promise<boolean> {
  const temp = `${path}.${holder.nonce}`
  await writeFile(temp, JSON.stringify(holder), { mode: 0o600 })
  try {
    await link(temp, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    await unlink(temp).catch(() => {})
  }
}

/**
 * Remove a lock whose holder is dead (killed mid-update), under a breaker directory so two waiters never both
 * remove it — one of them could otherwise remove the lock the other has just taken.
 */
async function breakIfDead(path: string): Promise<void> {
  const holder = await readHolder(path)
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
    const again = await readHolder(path)
    if (again?.nonce === holder?.nonce && !(again && isAlive(again.pid, again.start)))
      await unlink(path).catch(() => {})
  } finally {
    await rm(breaker, { recursive: true, force: true })
  }
}

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
  const holder: Holder = {
    pid: process.pid,
    start: processIdentity(process.pid),
    nonce: randomBytes(8).toString('hex'),
  }
  const deadline = Date.now() + options.waitMs
  for (;;) {
    if (options.signal.aborted) throw options.signal.reason
    let created: boolean
    try {
      created = await tryCreate(path, holder)
    } catch (error) {
      throw new AgentError('E_IO', `cannot take the update lock ${path}: ${(error as NodeJS.ErrnoException).code}`, {
        details: { path, stage: 'lock' },
        cause: error,
      })
    }
    if (created) break
    await breakIfDead(path)
    if (Date.now() > deadline) {
      const other = await readHolder(path)
      throw new AgentError('E_TIMEOUT', `another update of this install is still running (pid ${other?.pid ?? '?'})`, {
        details: { stage: 'lock', path, holder_pid: other?.pid ?? null, waited_ms: options.waitMs },
      })
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  try {
    return await fn()
  } finally {
    if ((await readHolder(path))?.nonce === holder.nonce) await unlink(path).catch(() => {})
  }
}
