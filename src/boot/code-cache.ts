import { builtin } from './builtin.js'

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
const Module = builtin<typeof import('node:module')>('node:module')
const { basename, dirname, isAbsolute, join } = builtin<typeof import('node:path')>('node:path')

/**
 * Node's compile cache for modules, kept in the code-cache directory (`modules/`): it is compiled code the process
 * will run, so it lives only where the bundle's cache may, a directory nobody else can write (Node's default, the
 * shared temporary directory, is not). No such directory (or `AGENTCLI_CODE_CACHE=0`): no cache. Also
 * agentcli's own bin, which runs from its modules.
 */
export function moduleCompileCache(dir: string | undefined): void {
  if (dir) Module.enableCompileCache?.(join(dir, 'modules'))
}

/**
 * Where V8 code caches of bundles live: `AGENTCLI_CODE_CACHE_DIR`, else the user's cache directory. `undefined`
 * when caching is off (`AGENTCLI_CODE_CACHE=0`) or no safe directory exists. `create` false (a warm process, which
 * writes nothing before it is handed a call): an existing directory only.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env, create = true): string | undefined {
  if (env.AGENTCLI_CODE_CACHE === '0') return undefined
  const dir = env.AGENTCLI_CODE_CACHE_DIR || join(userCacheRoot(env), 'agentcli', 'code-cache')
  // A relative directory would land wherever the tool is run from; the entry reports the setting as E_CONFIG.
  if (!isAbsolute(dir)) return undefined
  try {
    if (create) mkdirSync(dir, { recursive: true, mode: 0o700 })
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

/** What may name a cache file: a command word as {@link runKey} takes it. */
const COMMAND_WORD = /^[a-z][a-z0-9-]{0,39}$/

/**
 * The cache file of one bundle build under one Node for one command: `<bundle>-<build>-<word>.v8`, or
 * `<bundle>-<build>.v8` for a run that names no command (`--version`, help, a bare call), the common cache. V8
 * checks the Node version and flags but, of the source, only its length, so the build part carries the bundle's
 * size and modification time. One file per command's first word, because V8 deserialises the whole cache on every
 * start (≈ 0.6 ms of CPU per 100 KB): one cache holding what every command compiled cost a `list` some 5 ms.
 */
export function cacheFileName(bundle: string, size: number, mtimeMs: number, word = ''): string {
  const build = `${fnv1a(bundle)}-${fnv1a(`${size}\0${mtimeMs}\0${process.version}\0${process.arch}`)}`
  if (word === WARM_CACHE_WORD) return `${build}${WARM_CACHE_WORD}.v8`
  return COMMAND_WORD.test(word) ? `${build}-${word}.v8` : `${build}.v8`
}

/**
 * The cache of warm processes (src/boot/warm.ts), `<bundle>-<build>+warm.v8` (no command word has a `+`): they load
 * the bundle before they know their command, so theirs covers every command they ran. Its size costs nothing on a
 * call: it is read while the process waits.
 */
export const WARM_CACHE_WORD = '+warm'

/**
 * The word a run's cache is kept under: the first command word (`job` for every `job …` command), or `''` when
 * argv names none before its first flag. Never a value: `get 1` and `get 2` are one command.
 */
export function cacheWord(argv: readonly string[]): string {
  for (const arg of argv) {
    if (arg.startsWith('-')) return ''
    if (COMMAND_WORD.test(arg)) return arg
  }
  return ''
}

/** 32-bit FNV-1a as hex: a file name, not a security boundary (the private directory is). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0
  return hash.toString(16).padStart(8, '0')
}

/** At most this many rewrites of one cache file (a new run of its command rewrites it), then it stays. */
export const MAX_REWRITES = 64
/**
 * At most this many cache files per bundle build (one per command word, typos included); a run whose word has
 * none past that starts from the common cache and writes nothing.
 */
export const MAX_CACHE_FILES = 32
/** A cache larger than this is neither read nor written: the bundle's whole compiled code is well under 2 MB. */
export const MAX_CACHE_BYTES = 16 * 1024 * 1024
/** The file starts with this, then the header's length (uint32 LE), the header (JSON), then V8's data. */
const MAGIC = Buffer.from('agentcli-code-cache 1\n', 'latin1')
const MAX_HEADER_BYTES = 64 * 1024

/** What a cache file says about itself: how often it was rewritten and the runs (see {@link runKey}) it covers. */
export type CacheHeader = { rewrites: number; covers: string[] }
/** A cache file as read: its header, and V8's data when the file has the expected shape. */
export type CodeCache = CacheHeader & { data?: Buffer }

/**
 * The cache, or `undefined` when there is none yet, it cannot be read, it is too large, or it is not this user's
 * own file (checked on the open file, so a directory swapped after {@link codeCacheDir} looked at it gains
 * nothing). A file of another shape (damaged, an older format) comes back without data, to be replaced.
 */
export function readCodeCache(file: string): CodeCache | undefined {
  let fd: number | undefined
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
    const stat = fstatSync(fd)
    if (!stat.isFile() || (stat.mode & 0o022) !== 0 || stat.size > MAX_CACHE_BYTES) return undefined
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return undefined
    return parseCodeCache(readFileSync(fd))
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

function parseCodeCache(bytes: Buffer): CodeCache {
  const start = MAGIC.length + 4
  if (bytes.length < start || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { rewrites: 0, covers: [] }
  const length = bytes.readUInt32LE(MAGIC.length)
  if (length > MAX_HEADER_BYTES || start + length > bytes.length) return { rewrites: 0, covers: [] }
  try {
    const { rewrites, covers } = JSON.parse(bytes.toString('utf8', start, start + length)) as Partial<CacheHeader>
    if (!Number.isSafeInteger(rewrites) || !Array.isArray(covers)) return { rewrites: 0, covers: [] }
    return { rewrites: rewrites as number, covers: covers.map(String), data: bytes.subarray(start + length) }
  } catch {
    return { rewrites: 0, covers: [] }
  }
}

/**
 * What identifies a run's code path well enough for the cache: the leading command words and the names of the
 * flags given (never a value: `get 1` and `get 2` compile the same functions). Two runs with one key compile (nearly) the same functions; a new key may compile new ones.
 */
export function runKey(argv: readonly string[]): string {
  const words: string[] = []
  const flags = new Set<string>()
  for (const arg of argv) {
    if (arg === '--') break
    if (arg.startsWith('-')) flags.add(arg.split('=', 1)[0]!.slice(0, 40))
    else if (flags.size === 0 && words.length < 3 && COMMAND_WORD.test(arg)) words.push(arg)
  }
  return [...words, ...[...flags].sort().slice(0, 16)].join(' ')
}

/**
 * The header to write at exit, or `undefined` when this run needs no new cache: the cache was accepted and
 * already covers this run's key, or the bundle build's rewrites are spent. A cache V8 rejected is replaced
 * (keeping its count, so a cache rejected on every run stops being rewritten).
 */
export function nextHeader(cache: CodeCache | undefined, rejected: boolean, key: string): CacheHeader | undefined {
  const rewrites = cache?.rewrites ?? 0
  if (rewrites >= MAX_REWRITES) return undefined
  if (cache?.data === undefined || rejected) return { rewrites: rewrites + 1, covers: [key] }
  if (cache.covers.includes(key)) return undefined
  return { rewrites: rewrites + 1, covers: [...cache.covers, key] }
}

/** Caches of other bundles (an uninstalled version, a moved tool) go when they have not been rewritten this long. */
const STALE_AFTER_MS = 30 * 24 * 3600 * 1000

/**
 * Write a cache whole or not at all (temporary file, then rename), readable by this user only, unless it would be
 * a new file past {@link MAX_CACHE_FILES} of this build; remove the caches of the same bundle's earlier builds and
 * any cache untouched for 30 days. Best effort.
 */
export function writeCodeCache(file: string, data: Buffer, header: CacheHeader): void {
  const head = Buffer.from(JSON.stringify(header), 'utf8')
  if (head.length > MAX_HEADER_BYTES || MAGIC.length + 4 + head.length + data.length > MAX_CACHE_BYTES) return
  const length = Buffer.alloc(4)
  length.writeUInt32LE(head.length)
  const tmp = `${file}.${process.pid}.tmp`
  try {
    const dir = dirname(file)
    const name = basename(file)
    // `<bundle>-` and `<bundle>-<build>` (see cacheFileName).
    const bundle = name.slice(0, name.indexOf('-') + 1)
    const build = name.slice(0, bundle.length + 8)
    const names = readdirSync(dir).filter((other) => other.endsWith('.v8'))
    const ofBuild = names.filter((other) => other.startsWith(build))
    if (!ofBuild.includes(name) && ofBuild.length >= MAX_CACHE_FILES) return
    writeFileSync(tmp, Buffer.concat([MAGIC, length, head, data]), { mode: 0o600, flag: 'wx' })
    renameSync(tmp, file)
    const stale = Date.now() - STALE_AFTER_MS
    for (const other of names) {
      if (other.startsWith(build)) continue
      const path = join(dir, other)
      if (other.startsWith(bundle) || statSync(path).mtimeMs < stale) rmSync(path, { force: true })
    }
  } catch {
    // A cache that cannot be written costs the next run its speed, never its result.
  }
}
