/**
 * The run's stderr, for lines meant for people (a command's `log`/`warn`, progress, the audit writer's warning,
 * a signal's note). A tool's own process writes to `process.stderr`, which the guard in `stdout.ts` scrubs; an
 * in-process run (`run(root, { io })`) hands its own writer, and what reaches it is scrubbed here, so both see
 * the same redacted text.
 */

import { redactForOutput } from './redact.js'

let current: ((text: string) => void) | undefined

/** Write human text to this run's stderr, secrets scrubbed. */
export function writeStderr(text: string): void {
  if (current) current(redactForOutput(text))
  else process.stderr.write(text)
}

/** The stream progress draws on: this run's stderr (never a terminal when injected). */
export function stderrStream(): { write(text: string): unknown; isTTY?: boolean; columns?: number } {
  return current ? { write: writeStderr, isTTY: false } : process.stderr
}

/** Set by the session when it opens: the injected writer, or undefined for the process's own stderr; returns the one before. */
export function setRunStderr(write: ((text: string) => void) | undefined): ((text: string) => void) | undefined {
  const before = current
  current = write
  return before
}
