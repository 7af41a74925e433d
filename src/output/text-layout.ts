/** Layout rules shared by text tables and streamed rows: summaries of nested values, column widths. */

import { displayWidth } from './width.js'

/** Spaces between two columns. */
export const GAP = 2
/** Below this many columns per cell a table is unreadable: rows are printed as records instead. */
const MIN_COLUMN = 8
/** What a free-text column keeps before fixed-width columns (ids, timestamps) are cut too. */
const FLEX_FLOOR = 16
/** Columns an inline summary may take in a `key: value` line. */
const INLINE_BUDGET = 40
/** Inline budget in a table cell: wider, as the cell is cut to its column anyway. */
export const CELL_BUDGET = 72
/** Levels of nesting shown as indented blocks before values are summarised. */
export const MAX_DEPTH = 3

/** One row of a table: an object's keys are its columns. */
export type Row = Record<string, unknown>

/** A plain object (not an array, not null). */
export const isRecord = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v)
/** Anything that prints on one line as it is. */
export const isScalar = (v: unknown) => v === null || typeof v !== 'object'

// Untrusted text may carry escape sequences: on a terminal they would move the cursor or recolour the screen.
/** Text with line breaks flattened and control characters removed. */
export function clean(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
}

/** A scalar as a cell (`-` for null). */
export function scalar(value: unknown): string {
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
export function rigidColumns(cells: readonly string[][], count: number): boolean[] {
  return Array.from({ length: count }, (_, i) => {
    const first = displayWidth(cells[0]?.[i] ?? '')
    return cells.length > 1 && cells.every((r) => displayWidth(r[i]!) === first)
  })
}

/** The union of the rows' keys in first-seen order, `_untrusted` aside. */
export function columnsOf(rows: readonly Row[]): string[] {
  const columns: string[] = []
  for (const row of rows)
    for (const key of Object.keys(row)) if (key !== '_untrusted' && !columns.includes(key)) columns.push(key)
  return columns
}
