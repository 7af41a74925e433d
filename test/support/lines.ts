// What the `lines` stream yields (test/fixtures/cli/commands/lines.js, and its in-process twin in
// test/unit/output/render.test.ts), as the NDJSON writer prints it: shared by the spawn and the in-process tests.

/** The line the renderer promises for an item: `{ok, schema_version, type, data}` serialised as is. */
export const itemLine = (data: unknown) =>
  `${JSON.stringify({ ok: true, schema_version: '1.0', type: 'item', data })}\n`

/** The items `lines` yields, as printed: every `dirtyEvery`th redacted, one of `bigChars` characters at `bigAt`. */
export function expected(n: number, dirtyEvery: number, bigAt: number | undefined, bigChars: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    if (i === bigAt) return { i, label: 'é€'.repeat(bigChars / 2) }
    if (dirtyEvery > 0 && i % dirtyEvery === 0) return { i, token: '<redacted>' }
    if (i === 7) return '2026-01-02T03:04:05.000Z'
    if (i === 8) return `item ${i}`
    return { i, label: `item ${i}` }
  })
}

/** A stream's stdout split into its item lines and its closing summary envelope. */
export function split(stdout: string): { items: string; summary: Record<string, unknown> } {
  const last = stdout.lastIndexOf('\n', stdout.length - 2)
  return { items: stdout.slice(0, last + 1), summary: JSON.parse(stdout.slice(last + 1)) }
}
