import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { env, ROOT } from '../../support/helpers.js'

// verify on populated state, through the bin: the store fixture is empty in a fresh home, so what it lists is seen
// only by a verifier that creates state first. Each wrapper switches on exactly one defect; the check each defect
// fails is shown in-process, on the same store logic (test/unit/verify/verify-state.test.ts). Here: the clean store
// and the CI reports, which need the command and real processes.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const store = (name: string) => join(ROOT, `test/fixtures/store/${name}.mjs`)
type Check = { id: string; group: string; status: string; evidence: string }

const verify = (args: string[]) => runTool(AGENTCLI, ['verify', ...args], { timeoutMs: 60_000, validateOutput: true })
const checksOf = (run: Awaited<ReturnType<typeof verify>>): Check[] => {
  const doc = env(run)
  return doc.ok ? doc.data.checks : doc.error.details.checks
}
const find = (checks: Check[], id: string) => checks.find((c) => c.id === id)!

const dir = mkdtempSync(join(tmpdir(), 'verify-ci-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
// One run over the clean store, with a JUnit report: the checks below and the report's test read it.
const passXml = join(dir, 'pass.xml')
let clean: Awaited<ReturnType<typeof verify>>
beforeAll(async () => {
  clean = await verify(['--junit', passXml, '--', process.execPath, store('cli')])
}, 60_000)

describe('agentcli verify populates before it checks', () => {
  it('passes the clean store, having created two items through dry-run → confirm', () => {
    const run = clean
    expect(run.code, run.stdout.slice(0, 1500)).toBe(0)
    const checks = checksOf(run)
    expect(find(checks, 'populate.write:create')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'populate.write:create').evidence).toContain('confirmed twice')
    expect(find(checks, 'populate.state')).toMatchObject({ status: 'pass', evidence: 'the reads now list 2 item(s)' })
    // Real, non-empty output was validated, and `get <id>` ran with an id taken from the list.
    expect(find(checks, 'self.output_valid:list')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'self.output_valid:list').evidence).toMatch(/^list \(2 items\)/)
    expect(find(checks, 'self.output_valid:get')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'self.output_valid:get').evidence).toMatch(/^get 1:/)
    expect(find(checks, 'lists.bounded:list')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'self.read_no_side_effects:list')).toMatchObject({ status: 'pass' })
    // The second item varies the example's title (a tool deduping by title still gets two).
    expect(find(checks, 'populate.write:create').evidence).toContain('(then create --title Write the docs-2)')
    // The blind spots' checks run, and pass a store that keeps the rules.
    expect(find(checks, 'write.dry_run_no_side_effects:create')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'local.keeps_write_state:pin')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'local.keeps_write_state:pin').evidence).toMatch(/^pin 1 \(exit 0\)/)
  })
})

describe('agentcli verify reports for CI', () => {
  it('writes JUnit XML and SARIF with the failures, and still answers the envelope', async () => {
    const [xml, sarif] = [join(dir, 'verify.xml'), join(dir, 'verify.sarif')]
    const run = await verify(['--junit', xml, '--sarif', sarif, '--', process.execPath, store('ignore-limit')])
    expect(run.code).toBe(1)
    expect(env(run).error.code).toBe('E_CONFORMANCE')
    const total = env(run).error.details.summary.total
    const junit = readFileSync(xml, 'utf8')
    expect(junit).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites /)
    expect(junit).toContain(`tests="${total}" failures="1"`)
    expect(junit).toContain('<testsuite name="agentcli verify store: lists" tests="1" failures="1"')
    expect(junit).toMatch(
      /<testcase classname="verify.lists" name="lists.bounded:list"><failure message="--limit 1 of 2 answered 2/,
    )
    expect(junit.match(/<testcase /g)).toHaveLength(total)
    const report = JSON.parse(readFileSync(sarif, 'utf8'))
    expect(report.version).toBe('2.1.0')
    expect(report.runs[0].results).toEqual([
      expect.objectContaining({
        ruleId: 'lists.bounded',
        level: 'error',
        locations: [{ logicalLocations: [{ name: 'list', kind: 'function' }] }],
      }),
    ])
    expect(report.runs[0].tool.driver.rules.map((r: { id: string }) => r.id)).toContain('lists.bounded')
  }, 60_000)

  it('a passing run writes a JUnit file without failures; an unwritable path is E_IO', async () => {
    expect(clean.code).toBe(0)
    expect(readFileSync(passXml, 'utf8')).toMatch(/<testsuites name="agentcli verify store" tests="\d+" failures="0"/)
    // Any target shows the unwritable path: a CLI without reference, the shortest run there is.
    const plain = join(ROOT, 'test/fixtures/plain/cli.mjs')
    const bad = await verify(['--junit', join(dir, 'no/such/dir/x.xml'), '--', process.execPath, plain])
    expect(bad.code).toBe(1)
    expect(env(bad).error.code).toBe('E_IO')
  }, 60_000)
})
