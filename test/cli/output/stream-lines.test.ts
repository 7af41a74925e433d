import { describe, expect, it } from 'vitest'
import { fixture, useSandbox } from '../../support/helpers.js'
import { expected, itemLine, split } from '../../support/lines.js'

const box = useSandbox()

// The writer's logic (a line longer than a chunk, errors, a closed reader) is tested in-process in
// test/unit/output/render.test.ts; this file keeps what needs the real pipe: many chunks through the bin's stdout.
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
