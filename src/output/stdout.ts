/**
 * The only door to stdout. While a command runs, `process.stdout.write` is pointed at stderr, so a hook's
 * `this.log`, a stray `console.log` or a library banner cannot corrupt the one envelope; the renderer writes
 * through the original function kept here.
 */

import { redactForOutput } from './redact.js'

type Write = typeof process.stdout.write

let original: Write | undefined
let unguarded: { stdout: Write; stderr: Write } | undefined
let closed = false

const onStdoutError = (error: NodeJS.ErrnoException) => {
  // A reader that went away (`| head -c 10`) is not our failure: stop writing, exit quietly.
  if (error.code === 'EPIPE') closed = true
}

/**
 * Divert every other writer of stdout to stderr, and scrub secrets from everything written to stderr.
 * Idempotent.
 */
export function guardStdout(): void {
  if (original) return
  original = process.stdout.write.bind(process.stdout) as Write
  unguarded = { stdout: process.stdout.write, stderr: process.stderr.write }
  const stderrWrite = process.stderr.write.bind(process.stderr) as Write
  const scrubbed = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    return (stderrWrite as (c: string, ...r: unknown[]) => boolean)(redactForOutput(text), ...rest)
  }) as Write
  process.stderr.write = scrubbed
  process.stdout.write = scrubbed
  process.stdout.on('error', onStdoutError)
}

/**
 * Undo {@link guardStdout}: for a run the fast path hands to oclif's path (whose own copy of this module guards
 * stdout again) before anything was written.
 */
export function releaseStdout(): void {
  if (!unguarded) return
  process.stdout.off('error', onStdoutError)
  process.stdout.write = unguarded.stdout
  process.stderr.write = unguarded.stderr
  original = undefined
  unguarded = undefined
}

/** True once the reader of stdout has gone away. */
export function stdoutClosed(): boolean {
  return closed
}

/** Write to the real stdout; resolves when the chunk is handed to the OS, or at once if the pipe is closed. */
export function writeStdout(chunk: string | Uint8Array): Promise<void> {
  if (closed) return Promise.resolve()
  const write = original ?? (process.stdout.write.bind(process.stdout) as Write)
  return new Promise((resolve) => {
    try {
      const flushed = write(chunk, () => resolve())
      if (!flushed && closed) resolve()
    } catch {
      closed = true
      resolve()
    }
  })
}

/** Run `fn` with the real stdout restored (for `--help`, which is human text on stdout by design). */
export async function withRealStdout<T>(fn: () => Promise<T>): Promise<T> {
  if (!original) return fn()
  const diverted = process.stdout.write
  process.stdout.write = original
  try {
    return await fn()
  } finally {
    process.stdout.write = diverted
  }
}
