import type { Check } from './report.js'

/** What a CI report is made of: the verify run's target, tool and checks. */
export type CiInput = { target: string; tool: string | null; version: string | null; checks: Check[] }

const xml = (s: string) =>
  // Characters XML 1.0 cannot hold at all are dropped; the rest are escaped.
  s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)

/**
 * JUnit XML, the format most CI systems render natively (GitLab `reports:junit`, Jenkins, Azure, GitHub test
 * reporters): one testsuite per check group, one testcase per check, `failure` and `skipped` carrying the evidence.
 */
export function junit(input: CiInput): string {
  const groups = new Map<string, Check[]>()
  for (const c of input.checks) groups.set(c.group, [...(groups.get(c.group) ?? []), c])
  const name = `agentcli verify ${input.tool ?? input.target}`
  const count = (cs: Check[], s: Check['status']) => cs.filter((c) => c.status === s).length
  const suites = [...groups].map(([group, cs]) => {
    const cases = cs.map((c) => {
      const open = `    <testcase classname="${xml(`verify.${group}`)}" name="${xml(c.id)}">`
      if (c.status === 'pass') return `${open}<system-out>${xml(c.evidence)}</system-out></testcase>`
      if (c.status === 'skip') return `${open}<skipped message="${xml(c.evidence)}"/></testcase>`
      return `${open}<failure message="${xml(c.evidence.slice(0, 500))}" type="conformance">${xml(c.evidence)}</failure></testcase>`
    })
    return [
      `  <testsuite name="${xml(`${name}: ${group}`)}" tests="${cs.length}" failures="${count(cs, 'fail')}" errors="0" skipped="${count(cs, 'skip')}">`,
      ...cases,
      '  </testsuite>',
    ].join('\n')
  })
  const all = input.checks
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(name)}" tests="${all.length}" failures="${count(all, 'fail')}" errors="0" skipped="${count(all, 'skip')}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n')
}

/** The rule a check id belongs to: `self.output_valid:list` → `self.output_valid`. */
const ruleOf = (id: string) => id.split(':')[0]!

/**
 * SARIF 2.1.0 (GitHub code scanning, Azure DevOps): one rule per check kind, one `error` result per failed check.
 * Results point at the target's command, as a logical location: verify sees a black box, not source files.
 */
export function sarif(input: CiInput, verifierVersion: string): string {
  const failed = input.checks.filter((c) => c.status === 'fail')
  const rules = [...new Set(input.checks.map((c) => ruleOf(c.id)))].sort()
  return `${JSON.stringify(
    {
      $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
      version: '2.1.0',
      runs: [
        {
          tool: {
            driver: {
              name: 'agentcli verify',
              version: verifierVersion,
              rules: rules.map((id) => ({ id, shortDescription: { text: `agent contract: ${id}` } })),
            },
          },
          results: failed.map((c) => ({
            ruleId: ruleOf(c.id),
            level: 'error',
            message: { text: `${c.id}: ${c.evidence}` },
            locations: [
              {
                logicalLocations: [
                  { name: c.id.includes(':') ? c.id.slice(c.id.indexOf(':') + 1) : c.id, kind: 'function' },
                ],
              },
            ],
          })),
          properties: { target: input.target, tool: input.tool, version: input.version },
        },
      ],
    },
    null,
    2,
  )}\n`
}
