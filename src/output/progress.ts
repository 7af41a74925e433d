/**
 * Progress for people, on stderr only: a redrawn bar on a terminal, an occasional plain line on a pipe or a log,
 * nothing under `--quiet`. stdout never sees it, so an agent's envelope is the same with or without it.
 */

import { redactString } from './redact.js'
import { stderrStream } from './stderr.js'
import { displayWidth, terminalColumns, truncate } from './width.js'

/** What a piece of long work is and how big it is. */
export type ProgressOptions = {
  /** A few words for the work (`downloading tasks-1.2.0.tar.gz`). */
  label: string
  /** The amount at the end, when known; without it the count is shown without a bar. */
  total?: number | undefined
  /** How amounts read: `12/40` items (default) or `1.2/3.4 MiB`. */
  unit?: 'items' | 'bytes'
  /**
   * Off a terminal, the least time between two plain lines (default 2000 ms). Work that ends sooner prints
   * nothing there, so quick calls stay quiet in an agent's logs.
   */
  everyMs?: number
}

/** A running progress report. Every method is cheap to call often: drawing is rate-limited. */
export type Progress = {
  /** Advance by `n` (default 1). */
  tick(n?: number): void
  /** Set the amount done (and optionally a new total or label). */
  update(current: number, changes?: { total?: number; label?: string }): void
  /** End the report: the last state on its own line. Later calls do nothing. */
  done(): void
}

/** Where and how a report is drawn; the defaults are the process's stderr and clock. */
export type ProgressEnvironment = {
  quiet: boolean
  stream?: { write(text: string): unknown; isTTY?: boolean; columns?: number }
  now?: () => number
  /** Least time between two redraws on a terminal. */
  redrawMs?: number
}

/** A report that draws nothing (`--quiet`). */
export const SILENT_PROGRESS: Progress = { tick() {}, update() {}, done() {} }

const active = new Set<() => void>()

/** End every report still drawing (an error is about to be printed): the terminal line is left clean. */
export function settleProgress(): void {
  for (const end of [...active]) end()
}

function amount(n: number, unit: ProgressOptions['unit']): string {
  if (unit !== 'bytes') return String(n)
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = n / 1024
  let i = 0
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024
    i++
  }
  return `${value.toFixed(1)} ${units[i]}`
}

// A label can carry a job's message or an upstream's name: no escape sequences, no registered secrets on stderr.
function safeLabel(label: string): string {
  return redactString(label.replace(/[\u0000-\u001f\u007f-\u009f]/g, ''))
}

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
}

/** Start a progress report for `options` in `env`. */
export function createProgress(options: ProgressOptions, env: ProgressEnvironment): Progress {
  if (env.quiet) return SILENT_PROGRESS
  const stream = env.stream ?? stderrStream()
  const now = env.now ?? (() => performance.now())
  const tty = Boolean(stream.isTTY)
  const interval = tty ? (env.redrawMs ?? 100) : (options.everyMs ?? 2000)
  const started = now()
  let label = safeLabel(options.label)
  let { total } = options
  let current = 0
  let lastDraw = Number.NEGATIVE_INFINITY
  let finished = false
  let printed = false

  const counts = () =>
    total === undefined
      ? amount(current, options.unit)
      : `${amount(current, options.unit)}/${amount(total, options.unit)}`
  const fraction = () => (total ? Math.min(1, current / total) : undefined)
  const eta = () => {
    const f = fraction()
    if (f === undefined || f <= 0 || f >= 1) return ''
    return ` eta ${seconds(((now() - started) / f) * (1 - f))}`
  }

  const barLine = () => {
    const columns = terminalColumns(stream) - 1
    const f = fraction()
    const tail = f === undefined ? ` ${counts()}` : ` ${Math.floor(f * 100)}% ${counts()}${eta()}`
    const room = columns - displayWidth(label) - displayWidth(tail) - 3
    if (f === undefined || room < 10) return truncate(`${label}${tail}`, columns)
    const width = Math.min(40, room)
    const filled = Math.round(f * width)
    return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}]${tail}`
  }
  const plainLine = (state: string) => `${label}: ${state}\n`

  const draw = (force: boolean) => {
    const t = now()
    if (!force && t - lastDraw < interval) return
    lastDraw = t
    printed = true
    if (tty) stream.write(`\r\u001b[2K${barLine()}`)
    else {
      const f = fraction()
      stream.write(plainLine(f === undefined ? counts() : `${counts()} (${Math.floor(f * 100)}%)${eta()}`))
    }
  }

  const end = () => {
    if (finished) return
    finished = true
    active.delete(end)
    if (tty) stream.write(`\r\u001b[2K${barLine()}\n`)
    else if (printed) stream.write(plainLine(`done, ${counts()} in ${seconds(now() - started)}`))
  }

  active.add(end)
  // On a terminal the bar shows at once; off it the first line waits a full interval.
  if (tty) draw(true)
  else lastDraw = started

  return {
    tick(n = 1) {
      if (finished) return
      current += n
      draw(false)
    },
    update(value, changes = {}) {
      if (finished) return
      current = value
      if (changes.total !== undefined) total = changes.total
      if (changes.label !== undefined) label = safeLabel(changes.label)
      draw(false)
    },
    done: end,
  }
}
