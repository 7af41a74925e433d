import { sandbox } from 'agentcli/testing'
import { afterEach, describe, expect, it } from 'vitest'
import {
  CONFORMANCE_BASELINE,
  CONFORMANCE_REVISIONS,
  CONFORMANCE_SUITE_VERSION,
  judge,
  resolveConformanceSuite,
  runConformance,
} from '../../../src/verify/conformance.js'
import { tasksServer, useColdTasks } from '../../support/cold-tasks.js'
import { ROOT } from '../../support/helpers.js'
import { startMcpHttp } from '../../support/mcp-raw.js'

// The official MCP conformance suite (server mode), from the devDependency (never downloaded here), against the
// example's `tasks mcp --http`: both revisions' requirement sets, the tasks extension's scenarios included. A
// failure not in the baseline fails, and so does a baseline entry that passes (a stale one).

// The suite is not about the warm pool: the server starts none (cold-tasks.ts).
useColdTasks()
const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

describe('the MCP conformance suite against tasks mcp --http', () => {
  it('is the pinned devDependency, installed', () => {
    expect(resolveConformanceSuite(ROOT)?.version).toBe(CONFORMANCE_SUITE_VERSION)
  })

  it('every expected failure names the fixture it needs', () => {
    for (const baseline of Object.values(CONFORMANCE_BASELINE))
      for (const [scenario, reason] of Object.entries(baseline)) expect(reason, scenario).toMatch(/needs/)
  })

  it.each(CONFORMANCE_REVISIONS)(
    'requirements %s: only the baselined scenarios fail',
    async (revision) => {
      const suite = resolveConformanceSuite(ROOT)!
      const box = sandbox('agentcli-conformance-')
      const example = tasksServer()
      const server = await startMcpHttp(example.bin, { ...box.env, ...example.env })
      stops.push(async () => {
        await server.stop()
        box.cleanup()
      })
      const { results, log } = await runConformance(suite.bin, server.url, revision)
      const j = judge(revision, results, CONFORMANCE_BASELINE[revision])
      // The run reached the server: the scenarios every server passes did pass.
      expect(j.passed, log).toEqual(expect.arrayContaining(['tools-list', 'dns-rebinding-protection']))
      if (revision === '2026-07-28') expect(results.map((r) => r.scenario)).toContain('tasks-lifecycle')
      expect(j.unexpected, log).toEqual([])
      expect(j.stale, log).toEqual([])
    },
    120_000,
  )
})
