import { builtin } from '../boot/builtin.js'

const { existsSync } = builtin<typeof import('node:fs')>('node:fs')
const { basename, dirname, join } = builtin<typeof import('node:path')>('node:path')

/**
 * What an update killed just after its switch leaves behind (`.staging`, its dead holder's `update.lock`), cleared
 * on the tool's next run instead of the next update: only for a standalone install (`<root>/versions/<v>`, known
 * from the path alone), only when something is there, and only under the update lock (an update under way keeps
 * its work; a lock whose holder died is taken over). Best effort: a run never fails for it. Undefined when the
 * path alone says there is nothing to clear (every run not of a standalone install), so the run need not wait.
 */
export function clearUpdateLeftovers(toolRoot: string): Promise<void> | undefined {
  const versions = dirname(toolRoot)
  if (basename(versions) !== 'versions') return undefined
  return clearStandalone(dirname(versions))
}

async function clearStandalone(root: string): Promise<void> {
  const lockPath = join(root, 'update.lock')
  if (!existsSync(join(root, '.staging')) && !existsSync(lockPath)) return
  try {
    const [{ tryPidLock }, { clearLeftovers }] = await Promise.all([
      import('../fs/pid-lock.js'),
      import('./install.js'),
    ])
    const lock = await tryPidLock(lockPath)
    if (!('release' in lock)) return
    try {
      await clearLeftovers(root)
    } finally {
      await lock.release()
    }
  } catch {
    // The next update clears them too, under the same lock.
  }
}
