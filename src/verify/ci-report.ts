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

/** What each group of rules holds a CLI to, and how to fix a failure: the SARIF rule's description and help. */
const GROUPS: Record<string, { what: string; fix: string }> = {
  envelope: {
    what: 'stdout carries exactly one JSON envelope (or NDJSON lines) and nothing else',
    fix: 'write diagnostics to stderr and return data from the command; never print to stdout yourself',
  },
  exit: {
    what: 'every failure is an envelope whose error code sets the exit code',
    fix: 'throw a catalogue error (AgentError with an E_* code) instead of exiting or printing',
  },
  flags: {
    what: 'the universal flags behave alike on every command',
    fix: 'do not redefine --format, --json, --fields, --quiet or --no-input',
  },
  self: {
    what: 'the self-description (reference, output schemas, examples) matches what the commands do',
    fix: 'declare the output schema, kind and examples of each command as it behaves',
  },
  write: {
    what: 'a write never happens without a dry-run and a confirm token bound to it',
    fix: 'make the command a WriteCommand: plan() for the preview, apply() for the change',
  },
  local: {
    what: 'a local command changes a session, credentials or a job, never what only a write may change',
    fix: "make a command that changes the tool's data a WriteCommand (dry-run, then confirm)",
  },
  interactive: { what: 'nothing waits for input off a terminal', fix: 'give every prompt a flag that answers it' },
  fuzz: {
    what: 'random invocations keep the envelope, exit-code and stdio invariants',
    fix: 'reproduce with the printed seed',
  },
  populate: {
    what: 'the target can be given state through its own writes',
    fix: 'give each write a runnable --dry-run example',
  },
  lists: { what: 'lists are bounded and paginated', fix: 'page lists with a limit and a cursor' },
  stdio: {
    what: 'output is UTF-8 without BOM or ANSI, and --quiet silences stderr',
    fix: 'print plain text for people on stderr only, under --quiet nothing',
  },
  mcp: { what: 'the MCP surface mirrors reference and the write gate', fix: 'serve tools through `tool mcp`' },
  release: {
    what: 'a release is made only of a releasable tool',
    fix: 'declare the release evidence under agentcli.release_readiness',
  },
}

/** A SARIF rule for a rule id: its text, its full description and its help, from its group. */
function sarifRule(id: string, group: string) {
  const about = GROUPS[group] ?? { what: 'the agent contract', fix: 'see the evidence of the failed check' }
  return {
    id,
    shortDescription: { text: `agent contract: ${id}` },
    fullDescription: { text: `${id}: ${about.what}.` },
    help: { text: `${about.fix}. The check's evidence names what was seen.` },
  }
}

/**
 * SARIF 2.1.0 (GitHub code scanning, Azure DevOps): one rule per check kind, one `error` result per failed check.
 * Results point at the target's command, as a logical location: verify sees a black box, not source files.
 */
export function sarif(input: CiInput, verifierVersion: string): string {
  const failed = input.checks.filter((c) => c.status === 'fail')
  const groupOf = new Map(input.checks.map((c) => [ruleOf(c.id), c.group]))
  const rules = [...groupOf.keys()].sort()
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
              rules: rules.map((id) => sarifRule(id, groupOf.get(id)!)),
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
