import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The archive names `archiveTool` writes: `<bin>-v<version>-<platform>-<arch>.tar.gz`. */
const ARCHIVE = /^(.+-v\d[^/]*)-([a-z0-9]+)-([a-z0-9]+)\.tar\.gz$/

/**
 * Write `checksums.txt` (`<sha256>  <name>` lines, the format `sha256sum` and `update` read) over every archive
 * in `dir`. All archives must be of one tool and version; with `expect`, every expected target must be there,
 * so a matrix job that silently produced nothing fails the release instead of shipping without that platform.
 */
export function writeChecksums(
  dir: string,
  options: { name?: string; expect?: string[] } = {},
): { file: string; entries: Array<{ name: string; sha256: string; target: string }> } {
  const names = readdirSync(dir)
    .filter((n) => n.endsWith('.tar.gz'))
    .sort()
  if (names.length === 0) throw new Error(`no .tar.gz archives in ${dir}`)
  const prefixes = new Set<string>()
  const entries = names.map((name) => {
    const match = ARCHIVE.exec(name)
    if (!match) throw new Error(`${name} is not named <bin>-v<version>-<platform>-<arch>.tar.gz`)
    prefixes.add(match[1]!)
    const sha256 = createHash('sha256')
      .update(readFileSync(join(dir, name)))
      .digest('hex')
    return { name, sha256, target: `${match[2]}-${match[3]}` }
  })
  if (prefixes.size > 1) throw new Error(`archives of more than one tool or version: ${[...prefixes].join(', ')}`)
  const missing = (options.expect ?? []).filter((t) => !entries.some((e) => e.target === t))
  if (missing.length > 0) throw new Error(`no archive for ${missing.join(', ')}`)
  const file = join(dir, options.name ?? 'checksums.txt')
  writeFileSync(file, entries.map((e) => `${e.sha256}  ${e.name}\n`).join(''))
  return { file, entries }
}
