import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { env, ROOT } from '../../support/helpers.js'

// verify on populated state: the store fixture is empty in a fresh home, so each of its defects is visible only
// to a verifier that creates state first. Each wrapper switches on exactly one defect.
const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const store = (name: string) => join(ROOT, `test/fixtures/store/${name}.mjs`)
type Check = { id: string; group: string; status: string; evidence: string }

const verify = (args: string[]) => runTool(AGENTCLI, ['verify', ...args], { timeoutMs: 60_000, validateOutput: true })
const checksOf = (run: Awaited<ReturnType<typeof verify>>): Check[] => {
  const doc = env(run)
  return doc.ok ? doc.data.checks : doc.error.details.checks
}
const failed = (checks: Check[]) =>
  checks
    .filter((c) => c.status === 'fail')
    .map((c) => c.id)
    .sort()
const find = (checks: Check[], id: string) => checks.find((c) => c.id === id)!

describe('agentcli verify populates before it checks', () => {
  it('passes the clean store, having created two items through dry-run → confirm', async () => {
    const run = await verify(['--', process.execPath, store('cli')])
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
  }, 60_000)

  it('fails a list whose items break its declared schema (invisible while the store is empty)', async () => {
    const run = await verify(['--', process.execPath, store('schema')])
    expect(run.code).toBe(1)
    const checks = checksOf(run)
    // `get` answers the same broken item, so it fails too: one defect, seen by both reads of it.
    expect(failed(checks)).toEqual(['self.output_valid:get', 'self.output_valid:list'])
    expect(find(checks, 'self.output_valid:list').evidence).toContain('/items/0/title')
  }, 60_000)

  it('fails a list without a --limit', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('no-limit')]))
    expect(failed(checks)).toEqual(['lists.bounded:list'])
    expect(find(checks, 'lists.bounded:list').evidence).toContain('without a --limit flag')
  }, 60_000)

  it('fails a list that ignores its --limit', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('ignore-limit')]))
    expect(failed(checks)).toEqual(['lists.bounded:list'])
    expect(find(checks, 'lists.bounded:list').evidence).toBe('--limit 1 of 2 answered 2 (exit 0): --limit is ignored')
  }, 60_000)

  it('fails a read that writes only once there is state, naming the command and the path', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('read-writes')]))
    expect(failed(checks)).toEqual(['self.read_no_side_effects:list'])
    const evidence = find(checks, 'self.read_no_side_effects:list').evidence
    expect(evidence).toContain('list (a read) changed outside the cache dir')
    // It rewrites the same bytes on every call: the write is caught all the same.
    expect(evidence).toContain('~/data/store/last-list.json')
  }, 60_000)

  it('fails a write whose confirm refuses the token its own dry-run issued', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('spent-token')]))
    expect(failed(checks)).toEqual(['populate.write:create'])
    expect(find(checks, 'populate.write:create').evidence).toContain('confirm with its own token → exit 6, E_CONFLICT')
    // Nothing could be created: the report says the reads ran on empty state instead of passing them silently.
    expect(find(checks, 'populate.state')).toMatchObject({ status: 'skip' })
    expect(find(checks, 'lists.bounded:list')).toMatchObject({ status: 'skip' })
  }, 60_000)

  it('fails an unbounded list even where repeating the example makes one item (a create that dedupes by title)', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('unbounded')]))
    expect(failed(checks)).toEqual(['lists.bounded:list'])
    expect(find(checks, 'lists.bounded:list').evidence).toBe('--limit 1 of 2 answered 2 (exit 0): --limit is ignored')
  }, 60_000)

  it('fails a dry-run that writes a file (here into the working directory)', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('dry-run-writes')]))
    expect(failed(checks)).toEqual(['write.dry_run_no_side_effects:create'])
    expect(find(checks, 'write.dry_run_no_side_effects:create').evidence).toContain('~/work/create-preview.json')
  }, 60_000)

  it('passes a tool whose first read needs a login: the universal flags are probed on a read that answers', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('login-first')]))
    expect(failed(checks)).toEqual([])
    expect(find(checks, 'stdio.quiet_stderr').evidence).toBe('reference --quiet: stderr empty')
    expect(find(checks, 'flags.json_alias').status).toBe('pass')
  }, 60_000)

  it('fails a write whose dry-run says the policy holds it and whose confirm applies it without an approval', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('held-applies')]))
    expect(failed(checks)).toEqual(['write.held:create'])
    expect(find(checks, 'write.held:create').evidence).toBe('confirm without approval → exit 0; read state CHANGED')
  }, 60_000)

  it('fails a read that finds none of the ids its own list gave, instead of skipping its output check', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('get-fails')]))
    expect(failed(checks)).toEqual(['self.output_valid:get'])
    expect(find(checks, 'self.output_valid:get').evidence).toContain(
      'get 1 fails on the populated state: exit 3, E_NOT_FOUND',
    )
  }, 60_000)

  it('fails a read that answered on the empty state and fails once there is data', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('list-fails')]))
    expect(failed(checks)).toEqual(['self.output_valid:list'])
    expect(find(checks, 'self.output_valid:list').evidence).toBe(
      'list fails on the populated state: exit 4, E_CONFIG (on an empty state: exit 0); output not validated',
    )
  }, 60_000)

  it('fails a local command that changes what the writes own, naming the path', async () => {
    const checks = checksOf(await verify(['--', process.execPath, store('local-writes')]))
    expect(failed(checks)).toEqual(['local.keeps_write_state:pin'])
    expect(find(checks, 'local.keeps_write_state:pin').evidence).toContain(
      'pin 1 (local, no token) changed what a write owns: ~~/data/store/tasks.json',
    )
  }, 60_000)

  it('runs --setup lines first, dry-run → confirm for `--confirm <confirm_token>`, and fails one that fails', async () => {
    const run = await verify([
      '--setup',
      'store create --title "From setup" --confirm <confirm_token>',
      '--setup',
      'create --title Fourth --dry-run',
      '--setup',
      'get agentcli-verify-missing',
      '--',
      process.execPath,
      store('cli'),
    ])
    const checks = checksOf(run)
    expect(find(checks, 'populate.setup:1')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'populate.setup:2')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'populate.setup:3')).toMatchObject({ status: 'fail' })
    expect(find(checks, 'populate.setup:3').evidence).toContain('exit 3, E_NOT_FOUND')
    // One item from the setup line, two from the tool's own example.
    expect(find(checks, 'populate.state').evidence).toBe('the reads now list 3 item(s)')
    expect(failed(checks)).toEqual(['populate.setup:3'])
  }, 60_000)
})

describe('agentcli verify reports for CI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'verify-ci-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

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
    const xml = join(dir, 'pass.xml')
    const ok = await verify(['--junit', xml, '--', process.execPath, store('cli')])
    expect(ok.code).toBe(0)
    expect(readFileSync(xml, 'utf8')).toMatch(/<testsuites name="agentcli verify store" tests="\d+" failures="0"/)
    const bad = await verify(['--junit', join(dir, 'no/such/dir/x.xml'), '--', process.execPath, store('cli')])
    expect(bad.code).toBe(1)
    expect(env(bad).error.code).toBe('E_IO')
  }, 60_000)
})
