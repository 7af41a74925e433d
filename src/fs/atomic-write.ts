import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  openSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { inspectStateFile } from './state-file.js'

/** Options of {@link writeFileAtomic}. */
export type AtomicWriteOptions = {
  /** The file's mode, exact (not masked by the umask); unset, an existing file keeps its mode, a new one is 0600. */
  mode?: number
  /** fsync the data before the rename, so that the new content is on disk when the name points at it. */
  fsync?: boolean
}

let counter = 0

/**
 * Replace `path` with `data` atomically: a temp file next to it (created with O_EXCL), written, given its mode and
 * owner, fsync'd when asked, then renamed over the name, so a reader sees the old content or the new, never a
 * part. The file and its directory are checked first (`inspectStateFile`): a link, another user's file or a
 * directory others can write is refused with `E_CONFIG`, never written through. A failure removes the temp file
 * and leaves the file as it was.
 *
 * The system calls are synchronous on purpose: asynchronous, each of these tiny calls costs a thread-pool round
 * trip, together milliseconds on a command's path, while nothing else of a CLI run waits meanwhile. So writes to
 * one file land in call order, and no exit (a signal's) can come between the create and the rename: only a kill
 * leaves a temp file. This replaces `write-file-atomic` and its load time.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}) {
  const existing = inspectStateFile(path)
  const mode = options.mode ?? (existing ? existing.mode & 0o7777 : 0o600)
  let temp = ''
  let fd: number | undefined
  for (let attempt = 0; fd === undefined; attempt++) {
    // O_EXCL: a name taken by anything else (another process, a planted link) is never written through.
    temp = `${path}.${process.pid}.${(++counter).toString(36)}${Math.random().toString(36).slice(2, 8)}.tmp`
    try {
      fd = openSync(temp, 'wx', mode)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error
    }
  }
  try {
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data
      for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done)
      fchmodSync(fd, mode)
      if (existing && existing.gid !== process.getgid?.()) giveTo(fd, existing)
      if (options.fsync) fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(temp, path)
  } catch (error) {
    try {
      unlinkSync(temp)
    } catch {
      // Never created past the open, or already gone.
    }
    throw error
  }
}

/** Keep the file's group (the owner is this user's, checked): a privileged process may set any, others their own. */
function giveTo(fd: number, owner: Stats): void {
  try {
    fchownSync(fd, owner.uid, owner.gid)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EPERM' && code !== 'EINVAL') throw error
  }
}
