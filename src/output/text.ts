/** Human rendering for `--format text`. Not a contract: agents never parse it. */

import { displayWidth, padEnd, terminalColumns, truncate, wrap } from './width.js'

/** How to lay text out. */
export type TextOptions = {
  /** Columns available (the terminal's); lines never exceed it. */
  width?: number
  /** Emphasis for headers; identity off a TTY, so no escape code reaches a pipe. */
  bold?: (s: string) => string
}

const bold = (s: string) => `\u001b[1m${s}\u001b[22m`

/** Options for stdout as it is: its width, and bold headers only on a terminal that wants colour. */
export function terminalText(): TextOptions {
  const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb'
  return { width: terminalColumns(), ...(color ? { bold } : {}) }
}

const GAP = 2
/** Below this many columns per cell a table is unreadable: rows are printed as records instead. */
const MIN_COLUMN = 8
/** What a free-text column keeps before fixed-width columns (ids, timestamps) are cut too. */
const FLEX_FLOOR = 16
const INLINE_BUDGET = 40
/** Inline budget in a table cell: wider, as the cell is cut to its column anyway. */
const CELL_BUDGET = 72
const MAX_DEPTH = 3

type Row = Record<string, unknown>

const isRecord = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v)
const isScalar = (v: unknown) => v === null || typeof v !== 'object'

// Untrusted text may carry escape sequences: on a terminal they would move the cursor or recolour the screen.
function clean(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return '-'
  return clean(String(value))
}

/**
 * One line for any value: scalars as they are; a short array of scalars or a flat object inline
 * (`a, b` / `{id: 1, ok: true}`); anything bigger as a count (`[5 items]`, `{3 keys}`).
 */
export function summarize(value: unknown, budget = INLINE_BUDGET): string {
  if (isScalar(value)) return scalar(value)
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    if (value.every(isScalar)) {
      const inline = value.map(scalar).join(', ')
      if (displayWidth(inline) <= budget) return inline
    }
    return `[${value.length} ${value.length === 1 ? 'item' : 'items'}]`
  }
  const entries = Object.entries(value as Row).filter(([k]) => k !== '_untrusted')
  if (entries.length === 0) return '{}'
  if (entries.every(([, v]) => isScalar(v))) {
    const inline = `{${entries.map(([k, v]) => `${clean(k)}: ${scalar(v)}`).join(', ')}}`
    if (displayWidth(inline) <= budget) return inline
  }
  return `{${entries.length} ${entries.length === 1 ? 'key' : 'keys'}}`
}

/**
 * Widths that fit `budget` columns: narrow columns keep their natural width, the wide ones share the rest
 * equally (water-filling). `rigid` columns (every cell the same width: ids, timestamps) are cut only when cutting
 * the others to {@link FLEX_FLOOR} is not enough. Undefined when even {@link MIN_COLUMN} per column does not fit.
 */
export function fitWidths(
  natural: readonly number[],
  budget: number,
  rigid: readonly boolean[] = [],
): number[] | undefined {
  const sum = (ws: readonly number[]) => ws.reduce((a, b) => a + b, 0)
  if (sum(natural) <= budget) return [...natural]
  if (rigid.some(Boolean) && !rigid.every(Boolean)) {
    const fixed = natural.map((w, i) => (rigid[i] ? w : Math.min(w, FLEX_FLOOR)))
    if (sum(fixed) <= budget) return share(natural, fixed, budget, (i) => !rigid[i])
  }
  const floor = natural.map((w) => Math.min(w, MIN_COLUMN))
  if (sum(floor) > budget) return undefined
  return share(natural, floor, budget, () => true)
}

function share(natural: readonly number[], floor: number[], budget: number, flex: (i: number) => boolean): number[] {
  const sum = (ws: readonly number[]) => ws.reduce((a, b) => a + b, 0)
  const at = (cap: number) => natural.map((w, i) => (flex(i) ? Math.max(floor[i]!, Math.min(w, cap)) : floor[i]!))
  let lo = 0
  let hi = Math.max(...natural)
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (sum(at(mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  const widths = at(lo)
  // Hand the columns left over to the cut columns, one each, left to right.
  let spare = budget - sum(widths)
  for (let i = 0; i < widths.length && spare > 0; i++)
    if (flex(i) && widths[i]! < natural[i]!) {
      widths[i]!++
      spare--
    }
  return widths
}

/** Whether every cell of each column has one width (ids, timestamps, enums of one length). */
function rigidColumns(cells: readonly string[][], count: number): boolean[] {
  return Array.from({ length: count }, (_, i) => {
    const first = displayWidth(cells[0]?.[i] ?? '')
    return cells.length > 1 && cells.every((r) => displayWidth(r[i]!) === first)
  })
}

function columnsOf(rows: readonly Row[]): string[] {
  const columns: string[] = []
  for (const row of rows)
    for (const key of Object.keys(row)) if (key !== '_untrusted' && !columns.includes(key)) columns.push(key)
  return columns
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

/**
 * A table printed as a stream arrives: column widths come from the first rows (up to `batch`, or what came within
 * `waitMs`), later rows are cut to them, so memory stays flat and the first rows show promptly.
 */
export class TextRows {
  private pending: Row[] = []
  private columns: string[] | undefined
  private widths: number[] | undefined
  private firstAt = 0

  constructor(
    private readonly options: TextOptions = {},
    private readonly batch = 50,
    private readonly waitMs = 200,
  ) {}

  /** Take one item; returns the text to print now (often empty while the first rows are gathered). */
  push(item: unknown): string {
    const row = isRecord(item) ? item : { value: item }
    if (this.columns) return this.line(row)
    if (this.pending.length === 0) this.firstAt = performance.now()
    this.pending.push(row)
    return this.pending.length >= this.batch || performance.now() - this.firstAt >= this.waitMs ? this.flush() : ''
  }

  /** The rows still held back, at the end of the stream. */
  end(): string {
    return this.columns || this.pending.length === 0 ? '' : this.flush()
  }

  private flush(): string {
    const width = this.options.width ?? 80
    const columns = columnsOf(this.pending)
    this.columns = columns
    const headers = columns.map((c) => clean(c).toUpperCase())
    const natural = columns.map((c, i) =>
      Math.max(displayWidth(headers[i]!), ...this.pending.map((r) => displayWidth(summarize(r[c], CELL_BUDGET)))),
    )
    const budget = width - GAP * (columns.length - 1)
    // Too narrow for a table: equal shares, at least one column each; lines may then run long.
    const cells = this.pending.map((r) => columns.map((c) => summarize(r[c], CELL_BUDGET)))
    this.widths =
      fitWidths(natural, budget, rigidColumns(cells, columns.length)) ??
      natural.map(() => Math.max(1, Math.floor(budget / columns.length)))
    const bold = this.options.bold ?? ((s: string) => s)
    const out = [bold(this.format(headers)), ...this.pending.map((r) => this.line(r).trimEnd())].join('\n')
    this.pending = []
    return `${out}\n`
  }

  private line(row: Row): string {
    return `${this.format(this.columns!.map((c) => summarize(row[c], CELL_BUDGET)))}\n`
  }

  private format(values: string[]): string {
    return values
      .map((v, i) => {
        const cut = truncate(v, this.widths![i]!)
        return i === values.length - 1 ? cut : padEnd(cut, this.widths![i]!)
      })
      .join(' '.repeat(GAP))
      .trimEnd()
  }
}
