/**
 * Where the renderer writes. A run writes to the process's stdout (through the guard in `stdout.ts`) and stderr;
 * an in-process caller (a test, an embedder) hands its own sinks and reads what a run would have printed, byte for
 * byte, without a child process.
 */

import { stdoutClosed, writeStdout } from './stdout.js'

/** The renderer's outputs. */
export type OutputSinks = {
  /** Write to stdout; resolves when the chunk is handed on. `whole`: the chunk is all the run prints. */
  stdout(chunk: string | Uint8Array, options?: { whole?: boolean }): Promise<void>
  /** Write human text (notes, text-format errors) to stderr. */
  stderr(text: string): void
  /** True once the reader of stdout has gone away: a stream stops quietly. */
  closed(): boolean
  /** Whether stdout is a terminal (JSON is indented there unless `--compact`); unset: ask file descriptor 1. */
  isTTY?: boolean
}

/** The process's own stdout and stderr: what every run uses unless given other sinks. */
export const PROCESS_SINKS: OutputSinks = {
  stdout: writeStdout,
  stderr(text) {
    process.stderr.write(text)
  },
  closed: stdoutClosed,
}

/** Sinks that keep everything in memory, with what was written so far as text. */
export type MemorySinks = OutputSinks & {
  /** What went to stdout, decoded as UTF-8. */
  out(): string
  /** What went to stderr. */
  err(): string
}

/** Sinks into memory, for rendering in-process (tests): off a terminal unless `isTTY`. */
export function memorySinks(options: { isTTY?: boolean } = {}): MemorySinks {
  const out: Buffer[] = []
  let err = ''
  return {
    async stdout(chunk) {
      // A copy: the stream writer reuses its buffer once the write has resolved.
      out.push(Buffer.from(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk))
    },
    stderr(text) {
      err += text
    },
    closed: () => false,
    isTTY: options.isTTY ?? false,
    out: () => Buffer.concat(out).toString('utf8'),
    err: () => err,
  }
}

/** The sinks of a render: its own, or the process's. */
export function sinksOf(ctx: { sinks?: OutputSinks | undefined }): OutputSinks {
  return ctx.sinks ?? PROCESS_SINKS
}

/** What the text layout asks of stdout (a terminal? how wide?): the sinks' answer when they give one, else the process's. */
export function stdoutOf(ctx: { sinks?: OutputSinks | undefined }): { isTTY?: boolean; columns?: number } {
  return ctx.sinks?.isTTY === undefined ? process.stdout : { isTTY: ctx.sinks.isTTY }
}
