import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { lstat, mkdir, readdir, readlink, realpath, rename, rm, symlink } from 'node:fs/promises'
import { basename, dirname, join, relative, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { AgentError } from '../errors/agent-error.js'

/** How the running tool was installed (spec 002 §14). */
export type InstallMethod =
  | { method: 'standalone'; root: string; version_dir: string }
  | { method: 'npm'; package: string }
  | { method: 'unknown'; root: string }

/**
 * Detect the install method from where the tool runs. Standalone: `<root>/versions/<v>/` with `<root>/current`
 * pointing at it. npm global: inside `<npm prefix>/lib/node_modules/<package>`. Anything else is reported, not
 * guessed.
 */
export async function detectInstall(toolRoot: string, packageName: string): Promise<InstallMethod> {
  const real = await realpath(toolRoot)
  const versions = dirname(real)
  if (basename(versions) === 'versions') {
    const root = dirname(versions)
    try {
      if ((await realpath(join(root, 'current'))) === real) return { method: 'standalone', root, version_dir: real }
    } catch {}
  }
  if (
    real.split(sep).join('/').endsWith(`/lib/node_modules/${packageName}`) ||
    real.split(sep).join('/').endsWith(`/node_modules/${packageName}`)
  ) {
    try {
      const prefix = execFileSync('npm', ['prefix', '-g'], { encoding: 'utf8', timeout: 5000 }).trim()
      if (real.startsWith(await realpath(prefix))) return { method: 'npm', package: packageName }
    } catch {}
  }
  return { method: 'unknown', root: real }
}

/**
 * Download a response body to `path`, hashing it on the way (streamed: memory stays flat). `onBytes` hears the
 * size of each chunk (progress for people).
 */
export async function downloadTo(
  response: Response,
  path: string,
  signal?: AbortSignal,
  onBytes?: (n: number) => void,
): Promise<string> {
  if (!response.ok || !response.body)
    throw new AgentError(
      response.status === 404 ? 'E_NOT_FOUND' : 'E_SERVER',
      `download failed: HTTP ${response.status}`,
      { details: { stage: 'download', status: response.status } },
    )
  const hash = createHash('sha256')
  const source = Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>)
  source.on('data', (chunk: Buffer) => {
    hash.update(chunk)
    onBytes?.(chunk.length)
  })
  await pipeline(source, createWriteStream(path, { mode: 0o600 }), signal ? { signal } : {})
  return hash.digest('hex')
}

/**
 * Extract a release tarball into a new version directory next to the installed ones: into a hidden partial
 * directory first, renamed into place only when complete. Links and paths leaving the directory are refused.
 */
export async function extractRelease(tarball: string, root: string, version: string): Promise<string> {
  const { extract } = await import('tar')
  const versions = join(root, 'versions')
  const partial = join(versions, `.${version}.partial-${randomBytes(4).toString('hex')}`)
  await mkdir(partial, { recursive: true, mode: 0o755 })
  try {
    await extract({
      file: tarball,
      cwd: partial,
      strip: 1,
      preservePaths: false,
      filter: (_path, entry) => !('type' in entry) || (entry.type !== 'SymbolicLink' && entry.type !== 'Link'),
    })
    const target = join(versions, version)
    await rm(target, { recursive: true, force: true })
    await rename(partial, target)
    return target
  } catch (error) {
    await rm(partial, { recursive: true, force: true })
    throw new AgentError('E_IO', `cannot extract the release: ${(error as Error).message}`, {
      details: { stage: 'extract' },
      cause: error,
    })
  }
}

/** Point `link` at `target` atomically: a new symlink renamed over the old one. */
async function atomicLink(link: string, target: string): Promise<void> {
  const temp = `${link}.tmp-${randomBytes(4).toString('hex')}`
  await symlink(relative(dirname(link), target), temp)
  await rename(temp, link)
}

/**
 * The commit point: `previous` keeps the old version, then `current` switches to the new one with one rename.
 * A SIGKILL at any instant leaves `current` pointing at a complete version, old or new.
 */
export async function switchVersion(root: string, versionDir: string): Promise<{ previous: string | null }> {
  const current = join(root, 'current')
  let previous: string | null = null
  try {
    previous = join(root, await readlink(current))
    await atomicLink(join(root, 'previous'), previous)
  } catch {}
  await atomicLink(current, versionDir)
  return { previous }
}

/** The version directory `previous` points at, if any. */
export async function previousVersionDir(root: string): Promise<string | undefined> {
  try {
    return await realpath(join(root, 'previous'))
  } catch {
    return undefined
  }
}

/** Remove version directories other than current and previous, and partial leftovers. */
export async function cleanup(root: string): Promise<string[]> {
  const keep = new Set<string>()
  for (const name of ['current', 'previous']) {
    try {
      keep.add(await realpath(join(root, name)))
    } catch {}
  }
  const removed: string[] = []
  const versions = join(root, 'versions')
  for (const name of await readdir(versions).catch(() => [] as string[])) {
    const path = join(versions, name)
    if (keep.has(await realpath(path).catch(() => path))) continue
    if ((await lstat(path)).isDirectory()) {
      await rm(path, { recursive: true, force: true })
      removed.push(name)
    }
  }
  return removed
}
