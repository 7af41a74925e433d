/** Human rendering for `--format text`. Not a contract: agents never parse it. */

import { runEnv } from '../settings/run-env.js'
import {
  CELL_BUDGET,
  clean,
  columnsOf,
  fitWidths,
  GAP,
  isRecord,
  isScalar,
  MAX_DEPTH,
  type Row,
  rigidColumns,
  scalar,
  summarize,
} from './text-layout.js'
import { displayWidth, padEnd, terminalColumns, truncate, wrap } from './width.js'

/** How to lay text out. */
export type TextOptions = {
  /** Columns available (the terminal's): lines stay within them, save a word too wide to break (a token). */
  width?: number
  /** Emphasis for headers; identity off a TTY, so no escape code reaches a pipe. */
  bold?: (s: string) => string
}

const bold = (s: string) => `\u001b[1m${s}\u001b[22m`

/**
 * Options for stdout as it is (the process's, or an in-process run's sinks): its width, and bold headers only on a
 * terminal that wants colour.
 */
export function terminalText(stdout: { isTTY?: boolean; columns?: number } = process.stdout): TextOptions {
  const env = runEnv()
  const color = Boolean(stdout.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb'
  return { width: terminalColumns(stdout), ...(color ? { bold } : {}) }
}

/** Rows as records (`key  value` blocks) for terminals too narrow for their columns. */
function records(rows: readonly Row[], columns: readonly string[], width: number, bold: (s: string) => string): string {
  const keyWidth = Math.max(...columns.map(displayWidth))
  const blocks = rows.map((row, i) => {
    const lines = columns.map(
      (c) => `${padEnd(c, keyWidth)}  ${truncate(summarize(row[c], width), Math.max(1, width - keyWidth - GAP))}`,
    )
    return [bold(truncate(`-- ${i + 1} --`, width)), ...lines].join('\n')
  })
  return `${blocks.join('\n')}\n`
}

/**
 * Rows as an aligned table no wider than `width`: columns are the union of keys in first-seen order, cells that
 * do not fit end in `…`, nested values are summarised.
 */
export function table(rows: readonly Row[], options: TextOptions = {}): string {
  const { width = 80, bold = (s: string) => s } = options
  if (rows.length === 0) return '(none)\n'
  const columns = columnsOf(rows)
  const headers = columns.map((c) => clean(c).toUpperCase())
  const cells = rows.map((row) => columns.map((column) => summarize(row[column], CELL_BUDGET)))
  const natural = columns.map((_, i) => Math.max(displayWidth(headers[i]!), ...cells.map((r) => displayWidth(r[i]!))))
  const widths = fitWidths(natural, width - GAP * (columns.length - 1), rigidColumns(cells, columns.length))
  if (!widths) return records(rows, columns, width, bold)
  const line = (values: string[]) =>
    values
      .map((v, i) => {
        const cut = truncate(v, widths[i]!)
        return i === values.length - 1 ? cut : padEnd(cut, widths[i]!)
      })
      .join(' '.repeat(GAP))
      .trimEnd()
  return `${[bold(line(headers)), ...cells.map(line)].join('\n')}\n`
}

function keyValues(data: Row, options: Required<TextOptions>, indent = '', depth = 0): string {
  const entries = Object.entries(data).filter(([k]) => k !== '_untrusted')
  if (entries.length === 0) return `${indent}(empty)\n`
  const keyWidth = Math.min(24, Math.max(...entries.map(([k]) => displayWidth(clean(k)))))
  const lines: string[] = []
  for (const [rawKey, value] of entries) {
    const key = clean(rawKey)
    const nested = depth < MAX_DEPTH && !isScalar(value) && Object.keys(value as object).length > 0
    if (nested && isRecord(value)) {
      lines.push(`${indent}${key}:`, keyValues(value, options, `${indent}  `, depth + 1).trimEnd())
    } else if (nested && Array.isArray(value) && value.every(isRecord)) {
      const inner = table(value, { ...options, width: options.width - indent.length - 2 })
      lines.push(`${indent}${key}:`, inner.replace(/^/gm, `${indent}  `).trimEnd())
    } else {
      const head = `${indent}${padEnd(`${key}:`, keyWidth + 1)} `
      const room = Math.max(10, options.width - displayWidth(head))
      const [first = '', ...rest] = wrap(summarize(value, room), room)
      lines.push(`${head}${first}`.trimEnd(), ...rest.map((r) => ' '.repeat(displayWidth(head)) + r))
    }
  }
  return `${lines.join('\n')}\n`
}

// Footer entries (`count: 4`, `next_cursor: …`) side by side, a new line where the next one would not fit; never
// cut, as a cursor must stay whole to be copied.
function footerLines(entries: readonly string[], width: number): string {
  const lines: string[] = []
  for (const entry of entries) {
    const last = lines[lines.length - 1]
    if (last !== undefined && displayWidth(last) + GAP + displayWidth(entry) <= width)
      lines[lines.length - 1] = `${last}  ${entry}`
    else lines.push(entry)
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : ''
}

/** Render a command's data: a page or an array as a table, an object as aligned `key: value` lines. */
export function renderText(data: unknown, options: TextOptions = {}): string {
  const full: Required<TextOptions> = { width: options.width ?? 80, bold: options.bold ?? ((s) => s) }
  if (Array.isArray(data)) {
    if (data.every(isRecord)) return table(data, full)
    return `${data.map((v) => truncate(summarize(v, full.width), full.width)).join('\n')}\n`
  }
  if (isRecord(data)) {
    if (Array.isArray(data.items) && data.items.every(isRecord)) {
      const { items, ...rest } = data
      const footer = Object.entries(rest)
        .filter(([k, v]) => k !== '_untrusted' && v !== null && v !== undefined && v !== false)
        .map(([k, v]) => `${clean(k)}: ${summarize(v)}`)
      return table(items as Row[], full) + footerLines(footer, full.width)
    }
    return keyValues(data, full)
  }
  return `${scalar(data)}\n`
}
