import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { lstat, mkdir, readdir, readFile, readlink, realpath, rename, rm, symlink } from 'node:fs/promises'
import { basename, dirname, join, relative, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { AgentError } from '../errors/agent-error.js'
import { clearLockDebris } from '../fs/pid-lock.js'
import { runBounded } from './_child.js'
import type { UpdateStage } from './errors.js'

/** How the running tool was installed (spec 002 §14). */
export type InstallMethod =
  | { method: 'standalone'; root: string; version_dir: string }
  | { method: 'npm'; package: string }
  | { method: 'unknown'; root: string }

let npmPrefix: Promise<string | undefined> | undefined

/** `npm prefix -g`, asked once per process, asynchronously, within `timeoutMs`; undefined when npm cannot say. */
function globalPrefix(timeoutMs: number): Promise<string | undefined> {
  npmPrefix ??= runBounded('npm', ['prefix', '-g'], { timeoutMs })
    .then((r) => (r.code === 0 && !r.timed_out ? realpath(r.stdout.trim()) : undefined))
    .catch(() => undefined)
  return npmPrefix
}

/**
 * Detect the install method from where the tool runs. Standalone: `<root>/versions/<v>/` with `<root>/current`
 * pointing at it. npm global: inside `<npm prefix>/lib/node_modules/<package>` (npm is asked only for a tool
 * that runs from a node_modules directory, and only within `npmPrefixTimeoutMs`). Anything else is reported,
 * not guessed.
 */
export async function detectInstall(
  toolRoot: string,
  packageName: string,
  options: { npmPrefixTimeoutMs?: number } = {},
): Promise<InstallMethod> {
  const real = await realpath(toolRoot)
  const versions = dirname(real)
  if (basename(versions) === 'versions') {
    const root = dirname(versions)
    // Standalone even when `current` has moved on since this process started (another update switched it):
    // the update then answers E_CONFLICT install_changed instead of calling the install unknown.
    const current = await realpath(join(root, 'current')).catch(() => undefined)
    if (current && dirname(current) === versions) return { method: 'standalone', root, version_dir: real }
  }
  if (real.split(sep).join('/').endsWith(`/node_modules/${packageName}`)) {
    const prefix = await globalPrefix(options.npmPrefixTimeoutMs ?? 5_000)
    if (prefix && real.startsWith(prefix + sep)) return { method: 'npm', package: packageName }
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

/** Where an update stages its downloads: inside the install (same filesystem), owned by the lock holder. */
export function stagingDir(root: string): string {
  return join(root, '.staging')
}

/**
 * Remove what a killed update left behind: the staging directory and hidden partial extractions. Only call it
 * holding the install lock, so no running update's files are touched.
 */
export async function clearLeftovers(root: string): Promise<void> {
  await rm(stagingDir(root), { recursive: true, force: true })
  await clearLockDebris(join(root, 'update.lock'))
  const versions = join(root, 'versions')
  for (const name of await readdir(versions).catch(() => [] as string[]))
    if (name.startsWith('.')) await rm(join(versions, name), { recursive: true, force: true })
}

async function linked(root: string): Promise<Set<string>> {
  const keep = new Set<string>()
  for (const name of ['current', 'previous']) {
    try {
      keep.add(await realpath(join(root, name)))
    } catch {}
  }
  return keep
}

/**
 * Extract a release tarball into a new version directory next to the installed ones: into a hidden partial
 * directory first, renamed into place only when complete. Links and paths leaving the directory are refused.
 * An existing directory of the same version is replaced only if `current` does not point at it.
 */
export async function extractRelease(tarball: string, root: string, version: string): Promise<string> {
  const { extract } = await import('tar')
  const versions = join(root, 'versions')
  const suffix = randomBytes(4).toString('hex')
  const partial = join(versions, `.${version}.partial-${suffix}`)
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
    const existing = await realpath(target).catch(() => undefined)
    if (existing) {
      if (existing === (await realpath(join(root, 'current')).catch(() => undefined)))
        throw new Error(`${target} is the running version`)
      // Moved aside, not deleted in place: a rename is instant, so the directory is never seen half-removed.
      const aside = join(versions, `.${version}.old-${suffix}`)
      await rename(target, aside)
      await rm(aside, { recursive: true, force: true })
    }
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

/**
 * Remove version directories other than the ones `current` and `previous` point at (read at the moment of the
 * cleanup), and partial leftovers. Only call it holding the install lock.
 */
export async function cleanup(root: string): Promise<string[]> {
  const keep = await linked(root)
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

/** Under the lock: the install must still be the one the plan (and its confirm token) was made for. */
export async function assertInstalled(
  root: string,
  versionDir: string,
  from: string,
  stage: UpdateStage = 'lock',
): Promise<void> {
  const current = await realpath(join(root, 'current')).catch(() => undefined)
  if (current === versionDir) return
  let now: string | null = null
  try {
    now = (JSON.parse(await readFile(join(current ?? '', 'package.json'), 'utf8')) as { version: string }).version
  } catch {}
  throw new AgentError('E_CONFLICT', `the install changed since this update was planned (now ${now ?? 'unknown'})`, {
    details: {
      reason: 'install_changed',
      stage,
      planned_from: from,
      installed_version: now,
      fix: 'run the dry-run again for a new plan and token',
    },
  })
}
