// NDJSON streams: item lines and a summary, --fields, raw and text, failures mid-stream and before the first item.
// In-process (test/support/in-process.ts), moved from test/cli/jobs/long-work.test.ts with every assertion kept; a
// stream cut by a closed pipe stays there.
import { describe, expect, it } from 'vitest'
import { seed, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, tasksInProcess as tasks } from '../../support/in-process.js'

const box = useSandbox()

function lines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
}

describe('NDJSON streams', () => {
  it('prints one item line per element and a summary, every line with ok, schema_version, type', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b', status: 'done' },
    ])
    const run = await tasks(box(), ['export'])
    expect(run.code).toBe(0)
    const out = lines(run.stdout)
    expect(out.map((l) => l.type)).toEqual(['item', 'item', 'summary'])
    for (const l of out) expect(l).toMatchObject({ ok: true, schema_version: '1.0' })
    expect(out[2]!.data).toEqual({ count: 2 })
    expect(out[0]!.data).toMatchObject({ id: '1', title: 'a' })
  })

  it('--fields applies per item; --status filters', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b', status: 'done' },
    ])
    const out = lines((await tasks(box(), ['export', '--fields', 'id', '--status', 'done'])).stdout)
    expect(out.map((l) => l.data)).toEqual([{ id: '2' }, { count: 1 }])
  })

  it('--format raw writes CSV, --format text writes rows', async () => {
    seed(box(), [{ id: '1', title: 'has, comma "quoted"' }])
    const raw = await tasks(box(), ['export', '--format', 'raw'])
    expect(raw.stdout.split('\n').slice(0, 2)).toEqual([
      'id,title,status,created_at,updated_at,version',
      '1,"has, comma ""quoted""",open,2026-01-02T03:04:05.000Z,2026-01-02T03:04:05.000Z,1',
    ])
    const text = await tasks(box(), ['export', '--format', 'text'])
    expect(text.stdout.split('\n')[0]).toMatch(/^ID +TITLE +STATUS +CREATED_AT +UPDATED_AT +VERSION$/)
  })

  it('a failure mid-stream ends with one error line and the catalogue exit code', async () => {
    const run = await fixture(box(), ['count', '--n', '5', '--fail-at', '3'])
    expect(run.code).toBe(7)
    const out = lines(run.stdout)
    expect(out.map((l) => l.type)).toEqual(['item', 'item', 'item', 'error'])
    expect(out[3]).toMatchObject({ ok: false, schema_version: '1.0', error: { code: 'E_SERVER', retryable: true } })
  })

  it('a stream command that fails before its first item still speaks NDJSON: one error line', async () => {
    const run = await tasks(box(), ['export', '--bogus'])
    expect(run.code).toBe(2)
    expect(run.stdout.split('\n').filter(Boolean)).toHaveLength(1)
    expect(lines(run.stdout)[0]).toMatchObject({
      ok: false,
      schema_version: '1.0',
      type: 'error',
      error: { code: 'E_USAGE' },
    })
    // Found by the fuzzer: a bad --format is rejected before the command runs, and still as NDJSON.
    const format = await tasks(box(), ['export', '--format', 'yaml'])
    expect(format.code).toBe(2)
    expect(lines(format.stdout)).toEqual([
      expect.objectContaining({ ok: false, type: 'error', error: expect.objectContaining({ code: 'E_VALIDATION' }) }),
    ])
  })

  it('a command that streams nothing still ends with a summary', async () => {
    const out = lines((await tasks(box(), ['export'])).stdout)
    expect(out).toEqual([
      {
        ok: true,
        schema_version: '1.0',
        type: 'summary',
        data: { count: 0 },
        meta: { duration_ms: expect.any(Number) },
      },
    ])
  })
})
