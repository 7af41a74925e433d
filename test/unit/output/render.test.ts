import { describe, expect, it } from 'vitest'
import { AgentError } from '../../../src/errors/agent-error.js'
import { dataOutcome, rawOutcome, streamOutcome } from '../../../src/output/outcome.js'
import { memorySinks } from '../../../src/output/sinks.js'
import { expected, itemLine, split } from '../../support/lines.js'
import { pinned, renderErrorInProcess, renderInProcess } from '../../support/render.js'

/** The items of the fixture's `lines` command (test/fixtures/cli/commands/lines.js), produced in-process. */
async function* lines(n: number, dirtyEvery: number, bigAt: number | undefined, bigChars: number) {
  for (let i = 0; i < n; i++) {
    if (bigAt === i) yield { i, label: 'é€'.repeat(bigChars / 2) }
    else if (dirtyEvery > 0 && i % dirtyEvery === 0) yield { i, token: `tok-${i}` }
    else if (i === 7) yield new Date(Date.UTC(2026, 0, 2, 3, 4, 5))
    else if (i === 8) yield `item ${i}`
    else yield { i, label: `item ${i}` }
  }
}

const stream = (items: AsyncIterable<unknown>) => streamOutcome({ items, schemaVersion: '1.0', fields: undefined })

describe('the success envelope, rendered in-process', () => {
  it('is one line off a terminal, keys in contract order, meta with duration and notices, ending in a newline', async () => {
    const run = await renderInProcess(dataOutcome({ id: '1', title: 'a' }, '2.1'), {
      notices: [{ type: 'update_available', message: 'v2' }],
    })
    expect(run.code).toBe(0)
    expect(run.stderr).toBe('')
    expect(pinned(run.stdout)).toBe(
      '{"ok":true,"schema_version":"2.1","data":{"id":"1","title":"a"},"meta":{"duration_ms":0,"notices":[{"type":"update_available","message":"v2"}]}}\n',
    )
  })

  it('is indented on a terminal, unless --compact; --pretty indents off one', async () => {
    const data = dataOutcome({ a: 1 }, '1.0')
    const indented =
      '{\n  "ok": true,\n  "schema_version": "1.0",\n  "data": {\n    "a": 1\n  },\n  "meta": {\n    "duration_ms": 0\n  }\n}\n'
    expect(pinned((await renderInProcess(data, { isTTY: true })).stdout)).toBe(indented)
    expect(pinned((await renderInProcess(data, { pretty: true })).stdout)).toBe(indented)
    expect(pinned((await renderInProcess(data, { isTTY: true, compact: true })).stdout)).toBe(
      '{"ok":true,"schema_version":"1.0","data":{"a":1},"meta":{"duration_ms":0}}\n',
    )
  })

  it('redacts at the renderer: secrets under sensitive keys, dates as UTC ISO strings', async () => {
    const run = await renderInProcess(
      dataOutcome({ password: 'hunter2', nested: { api_key: 'k' }, at: new Date(Date.UTC(2026, 0, 2)) }, '1.0'),
    )
    const envelope = JSON.parse(run.stdout)
    expect(envelope.data).toEqual({
      password: '<redacted>',
      nested: { api_key: '<redacted>' },
      at: '2026-01-02T00:00:00.000Z',
    })
    expect(run.stdout).not.toContain('hunter2')
  })

  it('text format: the data as text on stdout, notes on stderr, and no notes under --quiet', async () => {
    const outcome = dataOutcome([{ id: '1', title: 'a' }], '1.0', { truncation_hint: 'use --cursor' })
    const run = await renderInProcess(outcome, { format: 'text', notices: [{ type: 'x', message: 'hello' }] })
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('ID  TITLE\n1   a\n')
    expect(run.stderr).toBe('note: use --cursor\nnote: hello\n')
    const quiet = await renderInProcess(outcome, { format: 'text', quiet: true, notices: [{ type: 'x' }] })
    expect(quiet.stdout).toBe(run.stdout)
    expect(quiet.stderr).toBe('')
  })
})

describe('the failure envelope, rendered in-process', () => {
  it('takes exit and retryable from the catalogue, with the details as given', async () => {
    const run = await renderErrorInProcess(new AgentError('E_NOT_FOUND', 'no task 9', { details: { id: '9' } }))
    expect(run.code).toBe(3)
    expect(pinned(run.stdout)).toBe(
      '{"ok":false,"schema_version":"1.0","error":{"code":"E_NOT_FOUND","message":"no task 9","details":{"id":"9"},"retryable":false},"meta":{"duration_ms":0}}\n',
    )
    expect(run.stderr).toBe('')
  })

  it('an undeclared code is reported as E_INTERNAL naming it', async () => {
    const run = await renderErrorInProcess(new AgentError('E_MADE_UP', 'oops'))
    const body = JSON.parse(run.stdout).error
    expect(body).toEqual({
      code: 'E_INTERNAL',
      message: 'undeclared error code E_MADE_UP: oops',
      details: { undeclared_code: 'E_MADE_UP' },
      retryable: false,
    })
    expect(run.code).toBe(1)
  })

  it('redacts secrets in the details, and in text format prints the error and its next step on stderr only', async () => {
    const error = new AgentError('E_CONFLICT', 'token spent', {
      details: { token: 'ct_secret', dry_run_command: 'tasks delete 1 --dry-run', fix: 'run the dry-run again' },
    })
    const json = await renderErrorInProcess(error)
    expect(json.code).toBe(6)
    expect(JSON.parse(json.stdout).error.details.token).toBe('<redacted>')
    const text = await renderErrorInProcess(error, { format: 'text' })
    expect(text.code).toBe(6)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(
      /^error E_CONFLICT: token spent\nnext: .*tasks delete 1 --dry-run\nfix: run the dry-run again\n$/,
    )
  })

  it("a stream command's failure before its first item is an NDJSON error line", async () => {
    const run = await renderErrorInProcess(new AgentError('E_VALIDATION', 'bad'), { stream: true, schemaVersion: '3' })
    expect(pinned(run.stdout)).toBe(
      '{"ok":false,"schema_version":"3","type":"error","error":{"code":"E_VALIDATION","message":"bad","details":{},"retryable":false},"meta":{"duration_ms":0}}\n',
    )
  })
})

describe('the NDJSON writer, in-process', () => {
  it('writes every item byte for byte in order, redacting only the items that need it, then the summary', async () => {
    const n = 20_000
    const run = await renderInProcess(stream(lines(n, 997, undefined, 0)))
    expect(run.code).toBe(0)
    const { items, summary } = split(run.stdout)
    expect(items).toBe(expected(n, 997, undefined, 0).map(itemLine).join(''))
    expect(summary).toMatchObject({ ok: true, type: 'summary', data: { count: n } })
  })

  // Moved from a spawn test (three runs of the bin): the chunking is the writer's logic, not the process's.
  it('a line longer than a chunk (multi-byte characters) arrives whole between its neighbours', async () => {
    for (const bigAt of [0, 3, 2_500]) {
      const run = await renderInProcess(stream(lines(3000, 0, bigAt, 150_000)))
      expect(run.code, run.stderr).toBe(0)
      const { items, summary } = split(run.stdout)
      expect(items).toBe(expected(3000, 0, bigAt, 150_000).map(itemLine).join(''))
      expect(summary).toMatchObject({ data: { count: 3000 } })
    }
  })

  it('a producer failing part-way ends the stream with an error line and the catalogue exit', async () => {
    async function* failing() {
      yield { i: 0 }
      throw new AgentError('E_SERVER', 'gone', { details: { status: 502 } })
    }
    const run = await renderInProcess(stream(failing()))
    const out = run.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(out).toHaveLength(2)
    expect(out[0]).toEqual({ ok: true, schema_version: '1.0', type: 'item', data: { i: 0 } })
    expect(out[1]).toMatchObject({
      ok: false,
      type: 'error',
      error: { code: 'E_SERVER', details: { status: 502 }, retryable: true },
    })
    expect(run.failure).toBe('E_SERVER')
    expect(run.code).toBe(7)
  })

  it('stops quietly once the reader went away', async () => {
    const sinks = memorySinks()
    let pulled = 0
    async function* endless() {
      for (;;) {
        pulled++
        yield { pulled }
      }
    }
    const { renderOutcome } = await import('../../../src/output/render.js')
    const { CORE_CATALOGUE } = await import('../../../src/errors/catalogue.js')
    const code = await renderOutcome(stream(endless()), {
      globals: { format: 'json', compact: true, quiet: false },
      catalogue: CORE_CATALOGUE,
      startedAt: 0,
      notices: [],
      sinks: { ...sinks, closed: () => pulled >= 5 },
    })
    expect(code).toBe(0)
    expect(pulled).toBe(5)
    expect(sinks.out()).toBe('')
  })
})

describe('raw bodies, in-process', () => {
  it('pass through unwrapped', async () => {
    const run = await renderInProcess(rawOutcome('plain bytes\n'))
    expect(run).toEqual({ code: 0, stdout: 'plain bytes\n', stderr: '', failure: undefined })
  })
})
