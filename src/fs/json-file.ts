import { readFile } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { beforeChange, noteChange } from '../errors/before-change.js'

/** Options of {@link writeJsonAtomic}. */
export type WriteOptions = { mode?: number; dirMode?: number }

/**
 * Read a JSON file. A missing file gives `fallback`; a file that is not valid JSON, or that `check` rejects, is
 * `E_IO` naming the path — never a silent reset, which would lose the user's data.
 */
export async function readJsonFile<T>(
  path: string,
  fallback: () => T,
  check: (value: unknown) => value is T,
): Promise<T> {
  let text: string
  try {
    text = await readText(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fallback()
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

/**
 * `fs.readFile` with a promise: not `fs/promises`, whose first load costs ≈ 1–3 ms (it brings readline and the
 * watchers along), on the start path of every read command.
 */
function readText(path: string): Promise<string> {
  return new Promise((resolve, reject) =>
    readFile(path, 'utf8', (error, text) => (error ? reject(error) : resolve(text))),
  )
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
  // Loaded on first write: read-only commands never pay for it.
  const { default: writeFileAtomic } = await import('write-file-atomic')
  try {
    await mkdir(dirname(path), { recursive: true, mode: options.dirMode ?? 0o700 })
    await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, { mode: options.mode ?? 0o600, fsync: true })
  } catch (error) {
    // The rename never happened: the file is as it was.
    throw beforeChange(
      new AgentError('E_IO', `cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
        details: { path, fix: `make ${dirname(path)} writable and free some space, then retry` },
        cause: error,
      }),
    )
  }
  noteChange()
}
