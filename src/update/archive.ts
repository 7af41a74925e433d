import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { lstat, mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { integrityError } from './errors.js'
import { tooLarge, type UpdateLimits } from './limits.js'

/** One file of a release as its archive holds it: size and SHA-256 of its bytes, by path in the version dir. */
export type ArchiveFiles = Map<string, { size: number; sha256: string }>

/** The archive to extract: where it is, its verified SHA-256, and the limits its contents are held to. */
export type VerifiedArchive = { path: string; name: string; sha256: string; limits: UpdateLimits }

/**
 * Small reads: the decompressor expands each write at once (up to ~1000× for deflate), so what one read can
 * become in memory is bounded by this: 16 KiB → at most ~16 MiB, whatever the archive holds.
 */
const READ_CHUNK = 16 * 1024

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile'])

/** Errno codes that mean the disk (or the OS) refused a write or a read: a local fault, not the release's. */
const isFsError = (error: unknown): error is NodeJS.ErrnoException =>
  /^E[A-Z0-9]+$/.test(String((error as NodeJS.ErrnoException | undefined)?.code))

function ioError(path: string, error: NodeJS.ErrnoException, what: string): AgentError {
  const fix =
    error.code === 'ENOSPC' || error.code === 'EDQUOT'
      ? `free space on the filesystem that holds ${path}`
      : error.code === 'EFBIG'
        ? 'raise the file-size limit of this shell (ulimit -f): the release holds a larger file'
        : `make ${path} writable`
  return new AgentError('E_IO', `cannot ${what} ${path}: ${error.code} (${error.message.replace(/^[A-Z]+: /, '')})`, {
    details: { stage: 'extract', path, errno: error.code, fix: `${fix}, then run the update again` },
    cause: error,
  })
}

/**
 * Extract a verified release tarball into a new version directory next to the installed ones, and prove that
 * what is on disk is what the archive holds before anything may point at it:
 * - the bytes extracted are the verified ones (their SHA-256 is computed again as they are read);
 * - every entry is held to the declared limits from its header, before any of it is written (entry size, the
 *   sum of all, their count, and the sum against the archive's size: a compression bomb is refused at its first
 *   header), and the decompression ratio is checked as it runs;
 * - every write is checked (a full disk is `E_IO` naming the file, never a truncated file passed over);
 * - then every file is read back and its size and SHA-256 compared with the archive's; a file that differs,
 *   is missing, or was not in the archive is `E_IO` `install_mismatch`.
 * Into a hidden partial directory first, renamed into place only when all of that holds. Links and paths leaving
 * the directory are never written. An existing directory of the same version is replaced only if `current`
 * does not point at it.
 */
export async function extractRelease(archive: VerifiedArchive, root: string, version: string): Promise<string> {
  const versions = join(root, 'versions')
  const target = join(versions, version)
  const suffix = randomBytes(4).toString('hex')
  const partial = join(versions, `.${version}.partial-${suffix}`)
  await mkdir(partial, { recursive: true, mode: 0o755 })
  try {
    const files = await unpack(archive, partial, target)
    await verifyInstalled(partial, files, target)
    const existing = await realpath(target).catch(() => undefined)
    if (existing) {
      if (existing === (await realpath(join(root, 'current')).catch(() => undefined)))
        throw new AgentError('E_CONFLICT', `${target} is the running version`, {
          details: { stage: 'extract', path: target, reason: 'install_changed' },
        })
      // Moved aside, not deleted in place: a rename is instant, so the directory is never seen half-removed.
      const aside = join(versions, `.${version}.old-${suffix}`)
      await rename(target, aside)
      await rm(aside, { recursive: true, force: true })
    }
    await rename(partial, target)
    return target
  } catch (error) {
    await discard(partial, join(versions, `.${version}.failed-${suffix}`))
    if (isAgentError(error)) throw error
    if (isFsError(error)) throw ioError(target, error, 'install the release into')
    throw new AgentError('E_IO', `cannot extract the release: ${(error as Error).message}`, {
      details: { stage: 'extract', path: archive.path },
      cause: error,
    })
  }
}

/**
 * Remove a failed extraction. Writes the extractor had in flight when it stopped may still land: the directory is
 * renamed away first, so they find no path to create anything under (a leftover hidden name is cleared by the
 * next update in any case).
 */
async function discard(partial: string, trash: string): Promise<void> {
  const gone = await rename(partial, trash).then(
    () => trash,
    () => partial,
  )
  await rm(gone, { recursive: true, force: true, maxRetries: 5 })
}

/** Unpack the archive into `partial`, returning the size and SHA-256 of every file as it came out of the archive. */
async function unpack(archive: VerifiedArchive, partial: string, target: string): Promise<ArchiveFiles> {
  const { Unpack } = await import('tar')
  const { limits } = archive
  const archiveSize = Math.max((await stat(archive.path)).size, 1)
  // What all files may add up to: the declared maximum, or `ratio` times the archive, whichever is smaller.
  const byRatio = limits.ratio * archiveSize
  const budget = Math.min(limits.unpacked_bytes, byRatio)
  const files: ArchiveFiles = new Map()
  const installedPath = (absolute: string) => join(target, relative(partial, absolute))
  let entries = 0
  let total = 0
  let refusal: AgentError | undefined
  const at = { stage: 'extract' as const, what: archive.name, where: archive.path, atLeast: true }
  const limitBreached = (count: number, size: number, sum: number, entry: string): AgentError | undefined => {
    if (count > limits.entries) return tooLarge('entries', limits.entries, count, at)
    if (size > limits.entry_bytes)
      return tooLarge('entry_bytes', limits.entry_bytes, size, {
        ...at,
        what: `${archive.name}: ${entry}`,
        atLeast: false,
      })
    if (sum <= budget) return undefined
    return byRatio < limits.unpacked_bytes
      ? tooLarge('ratio', limits.ratio, Math.ceil(sum / archiveSize), at)
      : tooLarge('unpacked_bytes', limits.unpacked_bytes, sum, at)
  }
  const digest = createHash('sha256')
  const input = createReadStream(archive.path, { highWaterMark: READ_CHUNK })
  input.on('data', (chunk) => digest.update(chunk))
  const extractor = new Unpack({
    cwd: partial,
    strip: 1,
    preservePaths: false,
    // Every warning is an error: a write that fails, a path that escapes, an entry type it cannot make.
    strict: true,
    maxDecompressionRatio: limits.ratio,
    // Called for each header as it is parsed, before the entry is queued or any of it written: links are
    // skipped, and the limits refuse an entry there (the parse stops; nothing of it is read into memory).
    filter: (_path, entry) => {
      if ('type' in entry && (entry.type === 'SymbolicLink' || entry.type === 'Link')) return false
      const size = 'size' in entry && typeof entry.size === 'number' ? entry.size : 0
      const path = 'path' in entry ? String(entry.path) : _path
      entries++
      total += size
      const over = limitBreached(entries, size, total, path)
      if (!over) return true
      refusal ??= over
      extractor.abort(over)
      return false
    },
    transform: (entry) => {
      if (!FILE_TYPES.has(entry.type)) return undefined
      const hash = createHash('sha256')
      let bytes = 0
      // tar types the result as its own entry class; it only pipes through it, which a Node Transform does.
      return new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk)
          bytes += chunk.length
          done(null, chunk)
        },
        flush(done) {
          files.set(relative(partial, String(entry.absolute)), { size: bytes, sha256: hash.digest('hex') })
          done()
        },
      }) as unknown as typeof entry
    },
  })
  try {
    await new Promise<void>((resolve, reject) => {
      extractor.on('error', reject)
      extractor.on('close', () => resolve())
      input.on('error', reject)
      // As tar reads a file itself: the parser answers write() with false until its entry drains (backpressure).
      input.pipe(extractor as unknown as NodeJS.WritableStream)
    })
  } catch (error) {
    input.destroy()
    if (refusal) throw refusal
    // The decompressor's own running check (bytes out against bytes in), between headers.
    if (/max decompression ratio exceeded/.test(String((error as Error).message)))
      throw tooLarge('ratio', limits.ratio, null, at)
    const entry = (error as { entry?: { absolute?: string; path?: string } }).entry
    if (isFsError(error)) throw ioError(entry?.absolute ? installedPath(entry.absolute) : target, error, 'write')
    throw new AgentError('E_IO', `cannot extract ${archive.name}: ${(error as Error).message}`, {
      details: { stage: 'extract', path: archive.path, ...(entry?.path ? { entry: entry.path } : {}) },
      cause: error,
    })
  }
  // The bytes unpacked must be the bytes verified: the file could have changed since its digest was checked.
  const got = digest.digest('hex')
  if (got !== archive.sha256)
    throw integrityError('checksum_mismatch', `${archive.name} changed after it was verified (SHA-256 ${got})`, {
      stage: 'extract',
      path: archive.path,
      expected: archive.sha256,
      got,
    })
  return files
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(createReadStream(path), hash)
  return hash.digest('hex')
}

/**
 * Read back what was written under `dir` and compare it with what the archive holds (`files`): the same set of
 * regular files, each with the archive's size and SHA-256. Anything else is `E_IO` `install_mismatch` naming the
 * file as it would be installed under `target`: the disk did not keep what was written.
 */
export async function verifyInstalled(dir: string, files: ArchiveFiles, target = dir): Promise<void> {
  const mismatch = (path: string, why: string, details: Record<string, unknown> = {}) =>
    new AgentError('E_IO', `${join(target, path)} is not what the release holds: ${why}`, {
      details: {
        stage: 'extract',
        reason: 'install_mismatch',
        path: join(target, path),
        ...details,
        fix: `check the filesystem that holds ${target} (free space, errors), then run the update again`,
      },
    })
  const seen = new Set<string>()
  const walk = async (sub: string): Promise<void> => {
    for (const name of await readdir(join(dir, sub))) {
      const path = join(sub, name)
      const info = await lstat(join(dir, path))
      if (info.isDirectory()) await walk(path)
      else if (!info.isFile()) throw mismatch(path, 'it is not a regular file')
      else {
        const expected = files.get(path)
        if (!expected) throw mismatch(path, 'the archive has no such file')
        if (info.size !== expected.size)
          throw mismatch(path, `${info.size} bytes on disk, ${expected.size} in the archive`, {
            expected_bytes: expected.size,
            got_bytes: info.size,
          })
        if ((await sha256Of(join(dir, path))) !== expected.sha256)
          throw mismatch(path, 'its content differs from the archive')
        seen.add(path)
      }
    }
  }
  await walk('')
  for (const path of files.keys()) if (!seen.has(path)) throw mismatch(path, 'it is missing')
}
