import { builtin } from './_builtin.js'

// See index.ts: built-ins without their ES module facades.
const {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} = builtin<typeof import('node:fs')>('node:fs')
const { homedir } = builtin<typeof import('node:os')>('node:os')
const { basename, dirname, isAbsolute, join } = builtin<typeof import('node:path')>('node:path')

/**
 * Where V8 code caches of bundles live: `AGENTCLI_CODE_CACHE_DIR`, else the user's cache directory. `undefined`
 * when caching is off (`AGENTCLI_CODE_CACHE=0`) or no safe directory exists.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.AGENTCLI_CODE_CACHE === '0') return undefined
  const dir = env.AGENTCLI_CODE_CACHE_DIR || join(userCacheRoot(env), 'agentcli', 'code-cache')
  // A relative directory would land wherever the tool is run from; the entry reports the setting as E_CONFIG.
  if (!isAbsolute(dir)) return undefined
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    return isPrivateDir(dir) ? dir : undefined
  } catch {
    return undefined
  }
}

function userCacheRoot(env: NodeJS.ProcessEnv): string {
  if (process.platform === 'win32') return env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local')
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches')
  return env.XDG_CACHE_HOME || join(homedir(), '.cache')
}

/**
 * A code cache is compiled code the process will run, so it is only read from a directory nobody else can write:
 * a real directory (not a link), owned by this user, not writable by group or others.
 */
export function isPrivateDir(dir: string): boolean {
  const stat = lstatSync(dir)
  if (!stat.isDirectory()) return false
  if (typeof process.getuid !== 'function') return true
  return stat.uid === process.getuid() && (stat.mode & 0o022) === 0
}

/**
 * The cache file of one bundle build under one Node: `<bundle>-<build>.v8`. V8 checks the Node version and flags
 * but, of the source, only its length, so the build part carries the bundle's size and modification time.
 */
export function cacheFileName(bundle: string, size: number, mtimeMs: number): string {
  return `${fnv1a(bundle)}-${fnv1a(`${size}\0${mtimeMs}\0${process.version}\0${process.arch}`)}.v8`
}

/** 32-bit FNV-1a as hex: a file name, not a security boundary (the private directory is). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0
  return hash.toString(16).padStart(8, '0')
}

/**
 * The cached data, or `undefined` when there is none yet, it cannot be read, or it is not this user's own file
 * (checked on the open file, so a directory swapped after {@link codeCacheDir} looked at it gains nothing).
 */
export function readCodeCache(file: string): Buffer | undefined {
  let fd: number | undefined
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
    const stat = fstatSync(fd)
    if (!stat.isFile() || (stat.mode & 0o022) !== 0) return undefined
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return undefined
    return readFileSync(fd)
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Caches of other bundles (an uninstalled version, a moved tool) go when they have not been rewritten this long. */
const STALE_AFTER_MS = 30 * 24 * 3600 * 1000

/**
 * Write a cache whole or not at all (temporary file, then rename), readable by this user only, and remove the
 * caches of the same bundle's earlier builds and any cache untouched for 30 days. Best effort.
 */
export function writeCodeCache(file: string, data: Buffer): void {
  const tmp = `${file}.${process.pid}.tmp`
  try {
    writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' })
    renameSync(tmp, file)
    const dir = dirname(file)
    const name = basename(file)
    const bundle = name.slice(0, name.indexOf('-') + 1)
    const stale = Date.now() - STALE_AFTER_MS
    for (const other of readdirSync(dir)) {
      if (other === name || !other.endsWith('.v8')) continue
      const path = join(dir, other)
      if (other.startsWith(bundle) || statSync(path).mtimeMs < stale) rmSync(path, { force: true })
    }
  } catch {
    // A cache that cannot be written costs the next run its speed, never its result.
  }
}
