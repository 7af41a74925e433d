import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { lstat, readdir, readFile, readlink, realpath, rename, rm, symlink } from 'node:fs/promises'
import { basename, dirname, join, relative, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { AgentError } from '../errors/agent-error.js'
import { clearLockDebris } from '../fs/pid-lock.js'
import { runEnv } from '../settings/run-env.js'
import { runBounded } from './_child.js'
import type { UpdateStage } from './errors.js'
import { tooLarge } from './limits.js'

/** How the running tool was installed (spec 002 §14). */
export type InstallMethod =
  | { method: 'standalone'; root: string; version_dir: string }
  | { method: 'npm'; package: string }
  | { method: 'unknown'; root: string }

// Keyed by the run's environment: one answer per process, and one per in-process run, whose PATH may name another npm.
const npmPrefixes = new WeakMap<NodeJS.ProcessEnv, Promise<string | undefined>>()

/** `npm prefix -g`, asked once per run, asynchronously, within `timeoutMs`; undefined when npm cannot say. */
function globalPrefix(timeoutMs: number): Promise<string | undefined> {
  const env = runEnv()
  let prefix = npmPrefixes.get(env)
  if (!prefix) {
    prefix = runBounded('npm', ['prefix', '-g'], { timeoutMs })
      .then((r) => (r.code === 0 && !r.timed_out ? realpath(r.stdout.trim()) : undefined))
      .catch(() => undefined)
    npmPrefixes.set(env, prefix)
  }
  return prefix
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

/** The most a download may be, and what to name in the refusal. */
export type DownloadCap = { maxBytes: number; name: string; url: string }

/**
 * Download a response body to `path`, hashing it on the way (streamed: memory stays flat). `onBytes` hears the
 * size of each chunk (progress for people). With `cap`, a body declared (Content-Length) or found larger than
 * `cap.maxBytes` is refused (`E_INTEGRITY` `too_large` naming the asset and its URL) before, or as soon as, it
 * passes the limit. A write that fails (a full disk) is `E_IO` naming `path`, never a network error.
 */
export async function downloadTo(
  response: Response,
  path: string,
  signal?: AbortSignal,
  onBytes?: (n: number) => void,
  cap?: DownloadCap,
): Promise<string> {
  if (!response.ok || !response.body)
    throw new AgentError(
      response.status === 404 ? 'E_NOT_FOUND' : 'E_SERVER',
      `download failed: HTTP ${response.status}`,
      { details: { stage: 'download', status: response.status } },
    )
  const over = (got: number, atLeast: boolean) =>
    tooLarge('archive_bytes', cap!.maxBytes, got, { stage: 'download', what: cap!.name, where: cap!.url, atLeast })
  const declared = Number(response.headers.get('content-length'))
  if (cap && Number.isFinite(declared) && declared > cap.maxBytes) {
    await response.body.cancel().catch(() => undefined)
    throw over(declared, false)
  }
  const hash = createHash('sha256')
  const source = Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>)
  let received = 0
  let refusal: AgentError | undefined
  source.on('data', (chunk: Buffer) => {
    received += chunk.length
    if (cap && received > cap.maxBytes) {
      refusal ??= over(received, true)
      source.destroy(refusal)
      return
    }
    hash.update(chunk)
    onBytes?.(chunk.length)
  })
  const file = createWriteStream(path, { mode: 0o600 })
  let writeError: NodeJS.ErrnoException | undefined
  file.on('error', (error) => {
    writeError ??= error
  })
  try {
    await pipeline(source, file, signal ? { signal } : {})
  } catch (error) {
    if (refusal) throw refusal
    if (writeError)
      throw new AgentError('E_IO', `cannot write ${path}: ${writeError.code} (${writeError.message})`, {
        details: {
          stage: 'download',
          path,
          errno: writeError.code ?? null,
          fix: `free space on the filesystem that holds ${path} (or make it writable), then run the update again`,
        },
        cause: writeError,
      })
    throw error
  }
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
