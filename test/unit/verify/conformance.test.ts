import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { judge, readResults, resolveConformanceSuite } from '../../../src/verify/conformance.js'

describe('judging a conformance run against its baseline', () => {
  it('sorts passes, expected failures, unexpected failures and stale entries', () => {
    const j = judge(
      'r',
      [
        { scenario: 'ok', failed: false, detail: '' },
        { scenario: 'known', failed: true, detail: 'x' },
        { scenario: 'new', failed: true, detail: 'boom' },
        { scenario: 'fixed', failed: false, detail: '' },
        { scenario: 'idle', failed: false, skipped: true, detail: 'harness pending' },
        { scenario: 'idle-known', failed: false, skipped: true, detail: 'no check ran' },
      ],
      { known: 'needs a', fixed: 'needs b', gone: 'needs c', 'idle-known': 'needs d' },
    )
    expect(j.passed).toEqual(['ok'])
    // A scenario the suite checked nothing in is neither a pass nor, when baselined, stale.
    expect(j.skipped).toEqual([
      { scenario: 'idle', detail: 'harness pending' },
      { scenario: 'idle-known', detail: 'no check ran' },
    ])
    expect(j.expected).toEqual([{ scenario: 'known', reason: 'needs a' }])
    expect(j.unexpected.map((u) => u.scenario)).toEqual(['new'])
    expect(j.stale).toEqual(['fixed', 'gone'])
  })

  it('reads each scenario directory the suite wrote; a warning alone is not a failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-conf-unit-'))
    try {
      const write = (name: string, checks: unknown) => {
        mkdirSync(join(dir, name))
        writeFileSync(join(dir, name, 'checks.json'), JSON.stringify(checks))
      }
      write('server-tools-list-2026-12-02T10-33-59-937Z', [{ id: 'a', status: 'SUCCESS' }])
      write('server-caching-2026-12-02T10-34-00-288Z', [{ id: 'c', status: 'FAILURE', errorMessage: 'no prompts' }])
      write('server-sse-2026-12-02T10-34-00-288Z', [{ id: 's', status: 'WARNING' }])
      write('server-idle-2026-12-02T10-34-00-288Z', [{ id: 'i', status: 'SKIPPED', errorMessage: 'Skipped: pending' }])
      write('server-empty-2026-12-02T10-34-00-288Z', [])
      mkdirSync(join(dir, 'not-a-scenario'))
      expect(readResults(dir)).toEqual([
        { scenario: 'caching', failed: true, detail: 'c: no prompts' },
        { scenario: 'empty', failed: false, skipped: true, detail: 'no check ran' },
        { scenario: 'idle', failed: false, skipped: true, detail: 'Skipped: pending' },
        { scenario: 'sse', failed: false, detail: '' },
        { scenario: 'tools-list', failed: false, detail: '' },
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('finds no suite where none is installed', () => {
    expect(resolveConformanceSuite(tmpdir())).toBeUndefined()
  })
})
