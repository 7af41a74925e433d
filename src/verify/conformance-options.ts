import {
  CONFORMANCE_BASELINE,
  CONFORMANCE_REVISIONS,
  CONFORMANCE_SUITE_VERSION,
  type ConformanceBaseline,
  type ConformanceOptions,
  type ConformanceRevision,
} from './conformance.js'
import { readConformanceBaseline } from './conformance-baseline-file.js'

/**
 * What one `--conformance` run runs and judges against, from its flags: the revision asked (`--revision`), else
 * both; the expected failures of `--baseline <file>`, else agentcli's own for a command, and none for a `--url`
 * (`foreign`): agentcli's baseline excuses the fixtures a server it generates lacks, which says nothing of another
 * server. The file is read here, before anything runs.
 */
export function conformanceOptions(
  flags: { revision?: string | undefined; baseline?: string | undefined },
  foreign: boolean,
): ConformanceOptions {
  const revisions = flags.revision
    ? CONFORMANCE_REVISIONS.filter((r) => r === flags.revision)
    : [...CONFORMANCE_REVISIONS]
  const tally = (baseline: ConformanceBaseline) =>
    revisions
      .map((r) => {
        const n = Object.keys(baseline[r as ConformanceRevision] ?? {}).length
        return `${r}: ${n} expected failure${n === 1 ? '' : 's'}`
      })
      .join(', ')
  if (flags.baseline !== undefined) {
    const baseline = readConformanceBaseline(flags.baseline)
    const unused = Object.keys(baseline).filter((r) => !revisions.includes(r as ConformanceRevision))
    return {
      revisions,
      baseline,
      baselineSource: `--baseline ${flags.baseline}: ${tally(baseline)}${unused.length ? ` (${unused.join(', ')} not run)` : ''}`,
    }
  }
  if (foreign)
    return {
      revisions,
      baseline: {},
      baselineSource:
        'no --baseline: every failing scenario fails (agentcli’s own baseline is for the servers it generates and is not applied to a --url)',
    }
  return {
    revisions,
    baseline: CONFORMANCE_BASELINE,
    baselineSource: `agentcli’s own (suite ${CONFORMANCE_SUITE_VERSION}): ${tally(CONFORMANCE_BASELINE)}, each for a fixture a generated server lacks`,
  }
}
