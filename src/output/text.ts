/** Human rendering for `--format text`. Not a contract: agents never parse it. */

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value).replace(/[\r\n\t]+/g, ' ')
}

/** Columns are the union of keys in first-seen order; widths fit the widest cell. */
export function table(rows: Record<string, unknown>[], bold: (s: string) => string = (s) => s): string {
  if (rows.length === 0) return '(none)\n'
  const columns: string[] = []
  for (const row of rows)
    for (const key of Object.keys(row)) if (key !== '_untrusted' && !columns.includes(key)) columns.push(key)
  const cells = rows.map((row) => columns.map((column) => cell(row[column])))
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((r) => r[i]!.length)))
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  const header = bold(line(columns.map((c) => c.toUpperCase())))
  return `${[header, ...cells.map(line)].join('\n')}\n`
}

function keyValues(data: Record<string, unknown>, indent = ''): string {
  const lines: string[] = []
  for (const [key, value] of Object.entries(data)) {
    if (key === '_untrusted') continue
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      lines.push(`${indent}${key}:`)
      lines.push(keyValues(value as Record<string, unknown>, `${indent}  `).trimEnd())
    } else if (
      Array.isArray(value) &&
      value.every((v) => v && typeof v === 'object' && !Array.isArray(v)) &&
      value.length > 0
    ) {
      lines.push(`${indent}${key}:`)
      lines.push(
        table(value as Record<string, unknown>[])
          .replace(/^/gm, `${indent}  `)
          .trimEnd(),
      )
    } else {
      lines.push(`${indent}${key}: ${cell(value)}`)
    }
  }
  return `${lines.filter((l) => l.length > 0).join('\n')}\n`
}

/** Render a command's data: a page or an array as an aligned table, an object as `key: value` lines. */
export function renderText(data: unknown, bold?: (s: string) => string): string {
  if (Array.isArray(data)) return table(data as Record<string, unknown>[], bold)
  if (data && typeof data === 'object') {
    const record = data as Record<string, unknown>
    if (Array.isArray(record.items)) {
      const { items, ...rest } = record
      const footer = Object.entries(rest)
        .filter(([, v]) => v !== null && v !== undefined && v !== false)
        .map(([k, v]) => `${k}: ${cell(v)}`)
        .join('  ')
      return table(items as Record<string, unknown>[], bold) + (footer ? `${footer}\n` : '')
    }
    return keyValues(record)
  }
  return `${cell(data)}\n`
}
