import { describe, expect, it } from 'vitest'
import { utcTime } from '../../../src/output/times.js'
import { env, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()

describe('every time the framework emits is ISO 8601 UTC with Z', () => {
  it('offset times in data, nested objects and lists are printed as the same instant in UTC', async () => {
    // Output validation is on (runTool's default): the declared z.iso.datetime() sees what is printed.
    const run = await fixture(box(), ['times'])
    expect(run.code, run.stdout).toBe(0)
    expect(env(run).data).toEqual({
      at: '2026-03-04T03:06:07.000Z',
      nested: { finished_at: '2026-03-05T00:30:00.500Z', note: 'not a time: 2026-03-04T05:06:07+02:00 in prose' },
      list: [
        '2026-03-03T23:36:00.000Z',
        // Not a real date: left as it is rather than rolled over into March.
        '2026-02-30T05:06:07+02:00',
        '2026-03-04T05:06:07Z',
        // No offset: a local time of unknown zone, not guessed at.
        '2026-03-04T05:06:07',
      ],
    })
  })

  it('stream items and error details are normalised too, and text output shows UTC', async () => {
    const stream = await fixture(box(), ['times', '--stream'])
    const items = stream.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.type === 'item')
      .map((l) => l.data.at)
    expect(items).toEqual(['2026-03-04T03:06:07.000Z', '2026-03-04T13:06:07.123Z'])
    const failed = await fixture(box(), ['times', '--fail'])
    expect(env(failed).error.details.retry_at).toBe('2026-03-04T10:36:07.000Z')
    const text = await fixture(box(), ['times', '--format', 'text'])
    expect(text.stdout).toContain('2026-03-04T03:06:07.000Z')
    expect(text.stdout).not.toContain('+02:00\n')
  })

  it('utcTime converts every offset spelling and leaves everything else alone', () => {
    expect(utcTime('2026-01-01T00:30:00+01:00')).toBe('2025-12-31T23:30:00.000Z')
    expect(utcTime('2026-01-01T00:30:00+0100')).toBe('2025-12-31T23:30:00.000Z')
    expect(utcTime('2026-01-01T00:30:00-01')).toBe('2026-01-01T01:30:00.000Z')
    expect(utcTime('2026-01-01T00:30:00,25+00:00')).toBe('2026-01-01T00:30:00.250Z')
    for (const same of [
      '2026-01-01T00:30:00Z',
      'hello',
      '2026-01-01',
      '2026-13-01T00:00:00+01:00',
      '2026-01-01T25:00:00+01:00',
    ])
      expect(utcTime(same)).toBe(same)
  })
})
