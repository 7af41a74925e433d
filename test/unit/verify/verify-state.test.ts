import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { evaluate, type PolicyFacts } from '../../../src/policy/evaluate.js'
import { readOperatorPolicy } from '../../../src/policy/load.js'
import { effectivePolicy } from '../../../src/policy/policy.js'
import { type Call, target } from '../../../src/verify/call.js'
import { runChecks } from '../../../src/verify/checks.js'
import { HELD_RULE, heldPolicy, sandboxConfigDir, withPolicy } from '../../../src/verify/policy-gate.js'
import type { Ref } from '../../../src/verify/reference-types.js'
import { Report } from '../../../src/verify/report.js'
import { ROOT } from '../../support/helpers.js'

// verify on populated state, in-process: every check of `runChecks` runs as it does in `agentcli verify`, but each
// call of the target is the store fixture run as a function (test/fixtures/store/store.mjs, the very logic its
// cli.mjs runs as a process) instead of a process. The store is empty in a fresh home, so each of its defects is
// visible only to a verifier that creates state first; STORE_DEFECT switches on exactly one. The whole command over
// the real process (the clean store, the CI reports) is test/cli/verify/verify-state.test.ts.
type RunStore = (argv: string[], env: Record<string, string>, cwd: string) => { code: number; stdout: string }
const { runStore } = (await import(pathToFileURL(join(ROOT, 'test/fixtures/store/store.mjs')).href)) as {
  runStore: RunStore
}

vi.mock('../../../src/verify/call.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/verify/call.js')>()
  const { ROOT } = await import('../../support/helpers.js')
  const store = (await import(pathToFileURL(join(ROOT, 'test/fixtures/store/store.mjs')).href)) as {
    runStore: RunStore
  }
  // `call`'s record of one call, from the fixture run in this process with the call's environment and directory.
  const call: typeof real.call = async (t, label, args, env = {}) => {
    const merged: Record<string, string> = { ...t.env }
    for (const [k, v] of Object.entries(env))
      if (v === undefined) delete merged[k]
      else merged[k] = v
    const started = Date.now()
    const { code, stdout } = store.runStore(args, merged, t.cwd)
    const result: Call = { label, args, code, stdout, stderr: '', timedOut: false, ms: Date.now() - started }
    t.calls.push(result)
    return result
  }
  return { ...real, call }
})

type Check = { id: string; group: string; status: string; evidence: string }
const targets: Array<ReturnType<typeof target>> = []
afterEach(() => {
  for (const t of targets.splice(0)) t.dispose()
})

/** verify's checks over the store with one defect (none for ''), and `--setup` lines; the report. */
async function verify(defect: string, setups: string[] = []): Promise<Report> {
  const t = target(['node', 'store'], 15_000, defect ? { STORE_DEFECT: defect } : {})
  targets.push(t)
  const report = new Report()
  await runChecks(t, report, { setups })
  return report
}
const checksOf = async (defect: string, setups: string[] = []): Promise<Check[]> =>
  (await verify(defect, setups)).checks
const failed = (checks: Check[]) =>
  checks
    .filter((c) => c.status === 'fail')
    .map((c) => c.id)
    .sort()
const find = (checks: Check[], id: string) => checks.find((c) => c.id === id)!

describe('verify populates before it checks (the store, in-process)', () => {
  it('the in-process store answers as its process does', () => {
    expect(typeof runStore).toBe('function')
    const env = { XDG_DATA_HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent' }
    expect(runStore(['list'], env, '/')).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^\{"ok":true,"schema_version":"1.0","data":\{"items":\[\],"count":0\},"meta":/),
    })
    expect(runStore(['nope'], env, '/').code).toBe(2)
    expect(runStore(['--help'], env, '/')).toEqual({ code: 0, stdout: 'store: a small task store\n' })
  })

  it('fails a list whose items break its declared schema (invisible while the store is empty)', async () => {
    const report = await verify('schema')
    // What makes `agentcli verify` answer E_CONFORMANCE, exit 1.
    expect(report.summary().fail).toBeGreaterThan(0)
    const checks = report.checks
    // `get` answers the same broken item, so it fails too: one defect, seen by both reads of it.
    expect(failed(checks)).toEqual(['self.output_valid:get', 'self.output_valid:list'])
    expect(find(checks, 'self.output_valid:list').evidence).toContain('/items/0/title')
  })

  it('fails a list without a --limit', async () => {
    const checks = await checksOf('no-limit')
    expect(failed(checks)).toEqual(['lists.bounded:list'])
    expect(find(checks, 'lists.bounded:list').evidence).toContain('without a --limit flag')
  })

  it('fails a list that ignores its --limit', async () => {
    const checks = await checksOf('ignore-limit')
    expect(failed(checks)).toEqual(['lists.bounded:list'])
    expect(find(checks, 'lists.bounded:list').evidence).toBe('--limit 1 of 2 answered 2 (exit 0): --limit is ignored')
  })

  it('passes a list whose example names --limit: the bound is checked without it, never with the flag twice', async () => {
    const checks = await checksOf('limit-example')
    expect(failed(checks)).toEqual([])
    expect(find(checks, 'lists.bounded:list')).toMatchObject({
      status: 'pass',
      evidence: 'default --limit 20; --limit 1 of 2 answered 1',
    })
  })

  it('fails a read that writes only once there is state, naming the command and the path', async () => {
    const checks = await checksOf('read-writes')
    expect(failed(checks)).toEqual(['self.read_no_side_effects:list'])
    const evidence = find(checks, 'self.read_no_side_effects:list').evidence
    expect(evidence).toContain('list (a read) changed outside the cache dir')
    // It rewrites the same bytes on every call: the write is caught all the same.
    expect(evidence).toContain('~/data/store/last-list.json')
  })

  it('fails a write whose confirm refuses the token its own dry-run issued', async () => {
    const checks = await checksOf('spent-token')
    expect(failed(checks)).toEqual(['populate.write:create'])
    expect(find(checks, 'populate.write:create').evidence).toContain('confirm with its own token → exit 6, E_CONFLICT')
    // Nothing could be created: the report says the reads ran on empty state instead of passing them silently.
    expect(find(checks, 'populate.state')).toMatchObject({ status: 'skip' })
    expect(find(checks, 'lists.bounded:list')).toMatchObject({ status: 'skip' })
  })

  it('fails an unbounded list even where repeating the example makes one item (a create that dedupes by title)', async () => {
    const checks = await checksOf('unbounded')
    expect(failed(checks)).toEqual(['lists.bounded:list'])
    expect(find(checks, 'lists.bounded:list').evidence).toBe('--limit 1 of 2 answered 2 (exit 0): --limit is ignored')
  })

  it('fails a dry-run that writes a file (here into the working directory)', async () => {
    const checks = await checksOf('dry-run-writes')
    expect(failed(checks)).toEqual(['write.dry_run_no_side_effects:create'])
    expect(find(checks, 'write.dry_run_no_side_effects:create').evidence).toContain('~/work/create-preview.json')
  })

  it('passes a tool whose first read needs a login: the universal flags are probed on a read that answers', async () => {
    const checks = await checksOf('login-first')
    expect(failed(checks)).toEqual([])
    expect(find(checks, 'stdio.quiet_stderr').evidence).toBe('reference --quiet: stderr empty')
    expect(find(checks, 'flags.json_alias').status).toBe('pass')
  })

  it('fails a write whose dry-run says the policy holds it and whose confirm applies it without an approval', async () => {
    const checks = await checksOf('held-applies')
    expect(failed(checks)).toEqual(['write.held'])
    const evidence = find(checks, 'write.held').evidence
    expect(evidence).toMatch(
      /^create --title "?Write the docs"?: --dry-run held \(ar_[0-9a-f]{24}\); --confirm without/,
    )
    expect(evidence).toContain('→ exit 0 no error; changed ')
    expect(evidence).toContain('~/data/store/tasks.json')
  })

  it('skips write.held on a tool that reads no agentcli policy, and takes its policy away after', async () => {
    const report = await verify('')
    expect(failed(report.checks)).toEqual([])
    expect(find(report.checks, 'write.held')).toMatchObject({
      status: 'skip',
      evidence: expect.stringContaining('under a policy that holds every write answered no data.approval'),
    })
    const t = targets.at(-1)!
    expect(existsSync(join(t.env.XDG_CONFIG_HOME!, 'store', 'policy.json'))).toBe(false)
    // The store made its config dir (its token secret) before the check: it stays.
    expect(existsSync(join(t.env.XDG_CONFIG_HOME!, 'store', 'confirm.secret'))).toBe(true)
  })

  it('fails a read that finds none of the ids its own list gave, instead of skipping its output check', async () => {
    const checks = await checksOf('get-fails')
    expect(failed(checks)).toEqual(['self.output_valid:get'])
    expect(find(checks, 'self.output_valid:get').evidence).toContain(
      'get 1 fails on the populated state: exit 3, E_NOT_FOUND',
    )
  })

  it('fails a read that answered on the empty state and fails once there is data', async () => {
    const checks = await checksOf('list-fails')
    expect(failed(checks)).toEqual(['self.output_valid:list'])
    expect(find(checks, 'self.output_valid:list').evidence).toBe(
      'list fails on the populated state: exit 4, E_CONFIG (on an empty state: exit 0); output not validated',
    )
  })

  it('fails a local command that changes what the writes own, naming the path', async () => {
    const checks = await checksOf('local-writes')
    expect(failed(checks)).toEqual(['local.keeps_write_state:pin'])
    expect(find(checks, 'local.keeps_write_state:pin').evidence).toContain(
      'pin 1 (local, no token) changed what a write owns: ~~/data/store/tasks.json',
    )
  })

  it('runs --setup lines first, dry-run → confirm for `--confirm <confirm_token>`, and fails one that fails', async () => {
    const checks = await checksOf('', [
      'store create --title "From setup" --confirm <confirm_token>',
      'create --title Fourth --dry-run',
      'get agentcli-verify-missing',
    ])
    expect(find(checks, 'populate.setup:1')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'populate.setup:2')).toMatchObject({ status: 'pass' })
    expect(find(checks, 'populate.setup:3')).toMatchObject({ status: 'fail' })
    expect(find(checks, 'populate.setup:3').evidence).toContain('exit 3, E_NOT_FOUND')
    // One item from the setup line, two from the tool's own example.
    expect(find(checks, 'populate.state').evidence).toBe('the reads now list 3 item(s)')
    expect(failed(checks)).toEqual(['populate.setup:3'])
  })
})

describe('verify: the policy write.held puts in the sandbox', () => {
  const facts = (kind: string): PolicyFacts => ({
    command: 'delete',
    kind,
    risk: { action: 'delete', blast_radius: 'one', reversible: false, undo: null, cost: null },
    targets: 1,
    size: undefined,
    profile: null,
    account: null,
  })

  it('is an owner-only policy.json the tool’s own loader accepts, holding every write for one approval', async () => {
    const home = mkdtempSync(join(tmpdir(), 'verify-held-'))
    try {
      const dir = join(home, 'config', 'tool')
      const read = await withPolicy(dir, heldPolicy(), async () => {
        expect(statSync(join(dir, 'policy.json')).mode & 0o777).toBe(0o600)
        expect(statSync(dir).mode & 0o777).toBe(0o700)
        return readOperatorPolicy(dir)
      })
      const policy = effectivePolicy(undefined, read)!
      expect(evaluate(policy, facts('write'))).toMatchObject({ decision: 'approve', rule: HELD_RULE, approvals: 1 })
      expect(evaluate(policy, facts('read')).decision).toBe('allow')
      // Taken away after the check, with the directories made for it: the other checks never see it.
      expect(existsSync(join(home, 'config'))).toBe(false)
      // Each policy has its own throw-away key.
      expect(heldPolicy().approvers![0]!.key).not.toBe(read!.approvers![0]!.key)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })

  it('never replaces a file already there, and leaves a directory that was there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-held-'))
    try {
      writeFileSync(join(dir, 'policy.json'), '{}')
      await expect(withPolicy(dir, heldPolicy(), async () => 1)).rejects.toMatchObject({ code: 'EEXIST' })
      rmSync(join(dir, 'policy.json'))
      expect(await withPolicy(dir, heldPolicy(), async () => 2)).toBe(2)
      expect(existsSync(dir)).toBe(true)
      expect(existsSync(join(dir, 'policy.json'))).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('writes only inside the sandbox: a config dir an author moved out of it is none', async () => {
    const t = target(['node', 'tool'], 5_000)
    try {
      const ref = { tool: 'tool', commands: [] } as unknown as Ref
      expect(await sandboxConfigDir(t, ref)).toBe(join(t.home, 'config', 'tool'))
      t.env.XDG_CONFIG_HOME = tmpdir()
      expect(await sandboxConfigDir(t, ref)).toBeUndefined()
      t.env.XDG_CONFIG_HOME = t.home
      expect(await sandboxConfigDir(t, { ...ref, tool: '..' })).toBeUndefined()
    } finally {
      t.dispose()
    }
  })
})
