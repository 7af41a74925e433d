import { createHash } from 'node:crypto'
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Every entry under `root` but `skip` (the cache dir): a digest and the mtime of each file, the target of each link.
 * The mtime catches a read that rewrites a file with the same bytes: it still wrote (and raced any writer).
 */
export function snapshot(root: string, skip: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (dir: string) => {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      const path = join(dir, name)
      if (path === skip) continue
      const stat = lstatSync(path)
      if (stat.isDirectory()) {
        out.set(`${path}/`, `dir ${stat.mode & 0o7777}`)
        walk(path)
      } else if (stat.isSymbolicLink()) out.set(path, `link ${readlinkSync(path)}`)
      else
        out.set(
          path,
          `${stat.mode & 0o7777} ${stat.mtimeMs} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`,
        )
    }
  }
  walk(root)
  return out
}

/** What changed between two snapshots: created, changed and removed paths, sorted. */
export function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = []
  for (const [path, value] of after)
    if (before.get(path) !== value) out.push(before.has(path) ? `~${path}` : `+${path}`)
  for (const path of before.keys()) if (!after.has(path)) out.push(`-${path}`)
  return out.sort()
}
