/**
 * The only door to stdout. While a command runs, `process.stdout.write` is pointed at stderr, so a hook's
 * `this.log`, a stray `console.log` or a library banner cannot corrupt the one envelope; the renderer writes
 * through the original function kept here.
 *
 * Node creates `process.stdout` and `process.stderr` on first use, and creating one loads its stream modules
 * (≈ 2 ms, a tenth of `node -e 0`). So the guard is put on each stream when something first reads it, and the
 * one envelope of a run, written while nothing else has asked for stdout, goes straight to file descriptor 1.
 */

import { writeSync } from 'node:fs'
import { redactForOutput } from './redact.js'

type Write = typeof process.stdout.write
type Name = 'stdout' | 'stderr'

let original: Write | undefined
let stderrWrite: Write | undefined
let guarded = false
let closed = false
/** Whether the stream exists yet: until something reads it, a whole envelope can go to the descriptor directly. */
const created = { stdout: false, stderr: false }

const onStdoutError = (error: NodeJS.ErrnoException) => {
  // A reader that went away (`| head -c 10`) is not our failure: stop writing, exit quietly.
  if (error.code === 'EPIPE') closed = true
}

const scrubbed = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
  // Reading process.stderr puts the guard on it (and keeps stderrWrite) if nothing had read it yet.
  const stream = process.stderr
  const write = stderrWrite ?? stream.write.bind(stream)
  return (write as (c: string, ...r: unknown[]) => boolean)(redactForOutput(text), ...rest)
}) as Write

const guards: Record<Name, (stream: NodeJS.WriteStream) => void> = {
  stdout: (stream) => {
    original = stream.write.bind(stream) as Write
    stream.write = scrubbed
    stream.on('error', onStdoutError)
  },
  stderr: (stream) => {
    stderrWrite = stream.write.bind(stream) as Write
    stream.write = scrubbed
  },
}

/** Put `guard` on the stream when it is first read (or now, if it already exists). */
function onFirstUse(name: Name): void {
  const descriptor = Object.getOwnPropertyDescriptor(process, name)
  if (!descriptor?.get || !descriptor.configurable) {
    created[name] = true
    guards[name](process[name])
    return
  }
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: descriptor.enumerable ?? true,
    get() {
      const stream = descriptor.get!.call(process) as NodeJS.WriteStream
      Object.defineProperty(process, name, {
        configurable: true,
        enumerable: descriptor.enumerable ?? true,
        value: stream,
      })
      created[name] = true
      guards[name](stream)
      return stream
    },
  })
}

/**
 * Divert every other writer of stdout to stderr, and scrub secrets from everything written to stderr.
 * Idempotent.
 */
export function guardStdout(): void {
  if (guarded) return
  guarded = true
  onFirstUse('stdout')
  onFirstUse('stderr')
}

/** True once the reader of stdout has gone away. */
export function stdoutClosed(): boolean {
  return closed
}

/**
 * Write to the real stdout; resolves when the chunk is handed to the OS, or at once if the pipe is closed.
 * `whole`: the chunk is all this run prints (one envelope), so while nothing else has asked for the stream it
 * goes to descriptor 1 directly; streams and servers (NDJSON, MCP) keep the stream and its back-pressure.
 */
export function writeStdout(chunk: string | Uint8Array, options: { whole?: boolean } = {}): Promise<void> {
  if (closed) return Promise.resolve()
  let rest: string | Uint8Array = chunk
  if (options.whole && guarded && !created.stdout) {
    const left = writeDirectly(chunk)
    if (left === undefined) return Promise.resolve()
    rest = left
  }
  // Reading the stream puts the guard on it (and keeps `original`) if nothing had read it yet.
  const stream = process.stdout
  const write = original ?? (stream.write.bind(stream) as Write)
  return new Promise((resolve) => {
    try {
      const flushed = write(rest, () => resolve())
      if (!flushed && closed) resolve()
    } catch {
      closed = true
      resolve()
    }
  })
}

/**
 * Nothing has asked for `process.stdout`: write to descriptor 1 itself. Returns what is left for the stream when
 * the descriptor would block (`EAGAIN`, a full non-blocking pipe), else undefined; a reader that went away
 * (`EPIPE`) or any other failure closes stdout, as the stream's error would.
 */
function writeDirectly(chunk: string | Uint8Array): Uint8Array | undefined {
  let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(1, bytes))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return bytes
      closed = true
      return undefined
    }
  }
  return undefined
}

/** Run `fn` with the real stdout restored (for `--help`, which is human text on stdout by design). */
export async function withRealStdout<T>(fn: () => Promise<T>): Promise<T> {
  // Reading the stream puts the guard on it (and keeps `original`) if nothing had read it yet.
  const stream = process.stdout
  if (!original) return fn()
  const diverted = stream.write
  stream.write = original
  try {
    return await fn()
  } finally {
    stream.write = diverted
  }
}
