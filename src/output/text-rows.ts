import type { TextOptions } from './text.js'
import {
  CELL_BUDGET,
  clean,
  columnsOf,
  fitWidths,
  GAP,
  isRecord,
  type Row,
  rigidColumns,
  summarize,
} from './text-layout.js'
import { displayWidth, padEnd, truncate } from './width.js'

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
