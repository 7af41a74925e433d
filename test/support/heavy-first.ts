import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The spawn files that take longest (20–50 s each, one worker): started first. Without a results cache (a fresh
 * clone, as CI runs) vitest orders files by size, and a short file with a long journey (an npm install) then starts
 * last and runs alone at the end of the run. The order is a guess that only moves work earlier: a stale entry costs
 * nothing.
 */
const HEAVY = [
  'test/cli/docs/guide.test.ts',
  // Three of its tests wait out the HTTP body deadline (10 s each, idle): 45 s in all.
  'test/cli/mcp/mcp-http.test.ts',
  'test/cli/scaffold/pack-install.test.ts',
  'test/cli/release/release-pipeline.test.ts',
  'test/cli/scaffold/from-checkout.test.ts',
  'test/cli/verify/verify.test.ts',
  'test/cli/update/update-robust.test.ts',
  'test/cli/update/update.test.ts',
  'test/cli/verify/verify-conformance.test.ts',
  'test/cli/fleet/fleet-jobs.test.ts',
  'test/cli/verify/verify-upstream.test.ts',
]

/** vitest's own order (projects, failures, durations, sizes), with {@link HEAVY} first within each project. */
export class HeavyFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const projects = [...new Set(sorted.map((spec) => spec.project.name))]
    const rank = (spec: TestSpecification) => {
      const at = HEAVY.findIndex((path) => spec.moduleId.endsWith(`/${path}`))
      return at === -1 ? HEAVY.length : at
    }
    const key = new Map(sorted.map((spec, i) => [spec, [projects.indexOf(spec.project.name), rank(spec), i] as const]))
    return [...sorted].sort((a, b) => {
      const [pa, ra, ia] = key.get(a)!
      const [pb, rb, ib] = key.get(b)!
      return pa - pb || ra - rb || ia - ib
    })
  }
}
