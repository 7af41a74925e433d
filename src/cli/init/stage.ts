import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

/**
 * Write a new tool all at once: `fill` writes into a staging directory next to `dir` (same filesystem, so the
 * move is a rename), which then becomes `dir` (new) or has its entries moved into it (an existing empty one, kept
 * as it is: it may be the caller's working directory). Any failure removes the stage, whatever was moved and the
 * parent directories made for it, so `dir` is as before and a retry starts clean; a kill leaves only a hidden
 * sibling `.<name>.init-*`, never a half-written `dir`.
 */
export async function writeStaged(dir: string, fill: (stage: string) => Promise<void>): Promise<void> {
  const madeParent = mkdirSync(dirname(dir), { recursive: true })
  // mkdir without a mode: the tool's directory gets the user's umask, as a plain mkdir would give it.
  const stage = join(dirname(dir), `.${basename(dir)}.init-${randomBytes(4).toString('hex')}`)
  const moved: string[] = []
  try {
    mkdirSync(stage)
    await fill(stage)
    if (!existsSync(dir)) return renameSync(stage, dir)
    for (const name of readdirSync(stage)) {
      renameSync(join(stage, name), join(dir, name))
      moved.push(join(dir, name))
    }
    rmdirSync(stage)
  } catch (error) {
    for (const path of moved) rmSync(path, { recursive: true, force: true })
    rmSync(stage, { recursive: true, force: true })
    if (madeParent) rmSync(madeParent, { recursive: true, force: true })
    throw error
  }
}
