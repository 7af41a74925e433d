import { closeSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { beforeChange, noteChange } from '../errors/before-change.js'
import { writeFileAtomic } from './atomic-write.js'
import { openStateFile } from './state-file.js'

/** Options of {@link readJsonFile}: `secret` also refuses a file others can read (credentials, keys). */
export type ReadOptions = {
  /** Refuse (`E_CONFIG`) a file that others or the group can read, as well as one they can write. */
  secret?: boolean
}

/** Options of {@link writeJsonAtomic}. */
export type WriteOptions = {
  /** The file's mode (default 0600). */
  mode?: number
  /** The mode of a directory created for it (default 0700). */
  dirMode?: number
}

/**
 * Read a JSON file. A missing file gives `fallback`; a file that is not valid JSON, or that `check` rejects, is
 * `E_IO` naming the path — never a silent reset, which would lose the user's data. The file is opened without
 * following a link, and a link, another user's file or one others can write is `E_CONFIG` (`openStateFile`).
 */
export async function readJsonFile<T>(
  path: string,
  fallback: () => T,
  check: (value: unknown) => value is T,
  options: ReadOptions = {},
): Promise<T> {
  let text: string
  try {
    const fd = openStateFile(path, 'read', options)
    try {
      text = readFileSync(fd, 'utf8')
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fallback()
    if (error instanceof AgentError) throw beforeChange(error)
    throw beforeChange(
      new AgentError('E_IO', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
        details: { path, fix: `make ${dirname(path)} a readable directory (it is missing, unreadable or a file)` },
        cause: error,
      }),
    )
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw corrupt(path, 'not valid JSON', error)
  }
  if (!check(value)) throw corrupt(path, 'unexpected structure')
  return value
}

function corrupt(path: string, why: string, cause?: unknown): AgentError {
  return beforeChange(
    new AgentError('E_IO', `${path} is corrupt (${why})`, {
      details: { path, fix: `inspect or restore ${path} from a backup; move it aside to start empty` },
      cause,
    }),
  )
}

/** Write JSON atomically (temp file + fsync + rename), creating the directory with `dirMode` (0700 by default). */
export async function writeJsonAtomic(path: string, value: unknown, options: WriteOptions = {}): Promise<void> {
  const text = `${JSON.stringify(value, null, 2)}\n`
  const write = () => writeFileAtomic(path, text, { mode: options.mode ?? 0o600, fsync: true })
  try {
    try {
      await write()
    } catch (error) {
      // The directory is made only when missing: the common case costs no mkdir.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      mkdirSync(dirname(path), { recursive: true, mode: options.dirMode ?? 0o700 })
      await write()
    }
  } catch (error) {
    // The rename never happened: the file is as it was.
    if (error instanceof AgentError) throw beforeChange(error)
    throw beforeChange(
      new AgentError('E_IO', `cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
        details: { path, fix: `make ${dirname(path)} writable and free some space, then retry` },
        cause: error,
      }),
    )
  }
  noteChange()
}
