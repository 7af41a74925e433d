import { describe, expect, it } from 'vitest'
import { fixture, useSandbox } from '../../support/helpers.js'

const box = useSandbox()

/** The line the renderer promises for an item: `{ok, schema_version, type, data}` serialised as is. */
const itemLine = (data: unknown) => `${JSON.stringify({ ok: true, schema_version: '1.0', type: 'item', data })}\n`

/** What `lines` yields (see test/fixtures/cli/commands/lines.js), as printed. */
function expected(n: number, dirtyEvery: number, bigAt: number | undefined, bigChars: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    if (i === bigAt) return { i, label: 'é€'.repeat(bigChars / 2) }
    if (dirtyEvery > 0 && i % dirtyEvery === 0) return { i, token: '<redacted>' }
    if (i === 7) return '2026-01-02T03:04:05.000Z'
    if (i === 8) return `item ${i}`
    return { i, label: `item ${i}` }
  })
}

function split(stdout: string): { items: string; summary: Record<string, unknown> } {
  const last = stdout.lastIndexOf('\n', stdout.length - 2)
  return { items: stdout.slice(0, last + 1), summary: JSON.parse(stdout.slice(last + 1)) }
}

// The writer's logic (a line longer than a chunk, errors, a closed reader) is tested in-process in
// render.unit.test.ts; this file keeps what needs the real pipe: many chunks through the bin's stdout.
describe('the NDJSON writer', () => {
  it('writes every item byte for byte in order across many chunks, redacting only the items that need it', async () => {
    const n = 20_000
    const run = await fixture(box(), ['lines', '--n', String(n), '--dirty-every', '997'])
    expect(run.code, run.stderr).toBe(0)
    const { items, summary } = split(run.stdout)
    expect(items).toBe(expected(n, 997, undefined, 0).map(itemLine).join(''))
    expect(summary).toMatchObject({ ok: true, type: 'summary', data: { count: n } })
  })
})
