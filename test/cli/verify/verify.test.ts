import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { invocation, prng, violations } from '../../../src/verify/fuzz.js'
import type { Ref } from '../../../src/verify/reference-types.js'
import { undrawnCommands } from '../../support/fuzz-cover.js'
import { env, ROOT, TASKS_BIN } from '../../support/helpers.js'

const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const BROKEN = join(ROOT, 'test/fixtures/broken/cli.mjs')

const verify = (args: string[]) => runTool(AGENTCLI, ['verify', ...args], { timeoutMs: 120_000, validateOutput: true })
let fuzzed: ReturnType<typeof verify> | undefined
/** One run over the broken CLI, fuzzed: its checks and its fuzz report are read by two tests. */
const brokenFuzzed = () => {
  fuzzed ??= verify(['--fuzz', '8', '--seed', '3', '--', process.execPath, BROKEN])
  return fuzzed
}

/**
 * The example's fuzz here: every command reached, in as few calls as a seed gives. Seed 107 is, of seeds 1 to 300,
 * the one whose invocations draw every command of the example soonest (45 calls; seed 1 takes 108); a test below
 * holds that. Each call pays a start of the tool; depth is elsewhere: the unit tier replays 300 recorded fuzz
 * envelopes of the example (test/support/envelopes.ts), and a scaffold's CI and `npm run verify:example` run 500.
 */
const EXAMPLE_FUZZ = { runs: 45, seed: 107 }

describe('agentcli verify', () => {
  // The suite's pass over the example, fuzzed: the fuzzer runs after every check, so the checks are those of a run
  // without it. `npm run verify:example` prints the same checks in text, with 500 fuzzed calls.
  it(`passes the example tool, with every check listed and nothing failed, ${EXAMPLE_FUZZ.runs} fuzzed calls included`, async () => {
    const { runs, seed } = EXAMPLE_FUZZ
    const run = await verify(['--fuzz', String(runs), '--seed', String(seed), '--', process.execPath, TASKS_BIN])
    expect(run.code, run.stdout.slice(0, 2000)).toBe(0)
    const data = env(run).data
    expect(data).toMatchObject({ tool: 'tasks', version: '0.1.0', summary: { fail: 0 } })
    expect(data.fuzz).toMatchObject(EXAMPLE_FUZZ)
    expect(data.checks.find((c: { id: string }) => c.id === 'fuzz.invariants').status).toBe('pass')
    const ids = data.checks.map((c: { id: string }) => c.id)
    for (const id of [
      'exit.unknown_command',
      'exit.unknown_flag',
      'exit.missing_argument',
      'exit.bad_enum',
      'exit.bad_format',
      'exit.raw_on_non_raw',
      'exit.catalogue',
      'exit.extension_rules',
      'flags.json_alias',
      'flags.text_format',
      'flags.quiet',
      'flags.bad_field',
      'flags.version',
      'flags.help',
      'self.reference_keys',
      'self.release_readiness',
      'self.doctor_readiness',
      'self.changelog_since_current',
      'write.no_token:create',
      'write.dry_run:create',
      'write.tampered:create',
      'interactive.timeouts',
    ]) {
      expect(ids).toContain(id)
    }
    expect(data.checks.find((c: { id: string }) => c.id === 'write.no_token:create').status).toBe('pass')
    const reads = data.checks.filter((c: { id: string }) => c.id.startsWith('self.read_no_side_effects:'))
    expect(reads.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining(['self.read_no_side_effects:list', 'self.read_no_side_effects:context']),
    )
    expect(reads.every((c: { status: string }) => c.status === 'pass')).toBe(true)
    // Populated first: the checks that a fresh, empty home used to skip now run on real state.
    const status = (id: string) => data.checks.find((c: { id: string }) => c.id === id)?.status
    for (const id of [
      'populate.write:create',
      'populate.write:edit',
      'populate.state',
      'self.output_valid:get',
      'self.read_no_side_effects:get',
      'lists.bounded:list',
      'write.no_token:edit',
      'write.no_token:delete',
      'write.dry_run:delete',
      'write.tampered:delete',
      // Under verify's own policy (one approval for every write): `delete 1 2` held, its confirm E_HUMAN_REQUIRED.
      'write.held',
      'stdio.utf8',
      'stdio.no_ansi',
      'stdio.quiet_stderr',
    ])
      expect([id, status(id)]).toEqual([id, 'pass'])
    expect(data.checks.find((c: { id: string }) => c.id === 'write.held').evidence).toMatch(
      /^delete 1 2: --dry-run held \(ar_[0-9a-f]{24}\); --confirm without an approval → exit 9 E_HUMAN_REQUIRED; nothing changed/,
    )
    // A delete is never confirmed while populating: it would take the state away.
    expect(ids).not.toContain('populate.write:delete')
    expect(data.checks.find((c: { id: string }) => c.id === 'self.output_valid:list').evidence).toMatch(
      /^list \(2 items\)/,
    )
  }, 300_000)

  it(`fuzzes every command of the example with ${EXAMPLE_FUZZ.runs} seeded calls`, async () => {
    const reference = await runTool(TASKS_BIN, ['reference'])
    const ref = env(reference).data as Ref
    expect(ref.commands.length).toBeGreaterThan(20)
    expect(undrawnCommands(ref, EXAMPLE_FUZZ.runs, EXAMPLE_FUZZ.seed)).toEqual([])
  })

  it('fails a deliberately broken CLI on exactly its three defects', async () => {
    const run = await brokenFuzzed()
    expect(run.code).toBe(1)
    const error = env(run).error
    expect(error.code).toBe('E_CONFORMANCE')
    // The fuzzer runs after every check, which its calls cannot touch: the checks are those of a run without it.
    const failed = error.details.checks
      .filter((c: { status: string; group: string }) => c.status === 'fail' && c.group !== 'fuzz')
      .map((c: { id: string }) => c.id)
    expect(failed.sort()).toEqual(['envelope:hello', 'envelope:status', 'exit.unknown_flag'])
  }, 120_000)

  it('fails a read command that changes state outside the cache dir', async () => {
    const run = await verify(['--', process.execPath, join(ROOT, 'test/fixtures/broken/read-writes.mjs')])
    expect(run.code).toBe(1)
    const checks = env(run).error.details.checks as Array<{ id: string; status: string; evidence: string }>
    const failed = checks.filter((c) => c.status === 'fail').map((c) => c.id)
    expect(failed.sort()).toEqual([
      'envelope:hello',
      'envelope:status',
      'exit.unknown_flag',
      'self.read_no_side_effects:context',
    ])
    expect(checks.find((c) => c.id === 'self.read_no_side_effects:context')!.evidence).toContain(
      '~/data/broken/last-context',
    )
    expect(checks.find((c) => c.id === 'self.read_no_side_effects:doctor')!.status).toBe('pass')
  }, 120_000)

  it('prints a readable report in text mode', async () => {
    const run = await runTool(AGENTCLI, ['verify', '--format', 'text', '--', process.execPath, BROKEN], {
      timeoutMs: 120_000,
    })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('FAIL envelope:hello')
    expect(run.stderr).toMatch(/^error E_CONFORMANCE: 3 of \d+ conformance checks failed/m)
  }, 120_000)

  it('reports a fuzz failure with its seed and the argv to reproduce it', async () => {
    const run = await brokenFuzzed()
    const fuzz = env(run).error.details.checks.find((c: { id: string }) => c.id === 'fuzz.invariants')
    expect(fuzz.status).toBe('fail')
    // Seed 3 breaks an invariant from its first invocation on (2 of 8): eight are enough to show the report.
    expect(fuzz.evidence).toMatch(/^seed 3: \d+\/8 broke an invariant; #\d+ \[/)
    expect(env(run).error.details.fuzz).toMatchObject({ runs: 8, seed: 3 })
  }, 120_000)

  it('needs a command to verify', async () => {
    const run = await verify([])
    expect(run.code).toBe(2)
    expect(env(run).error.code).toBe('E_USAGE')
  })

  it('names a target that cannot start (E_NOT_FOUND, exit 3) instead of failing thirty checks', async () => {
    const script = await verify(['--', process.execPath, 'no/such/bin/run.js'])
    expect([script.code, env(script).error.code, env(script).error.details.path]).toEqual([
      3,
      'E_NOT_FOUND',
      'no/such/bin/run.js',
    ])
    const program = await verify(['--', 'agentcli-verify-no-such-program'])
    expect([program.code, env(program).error.details.path]).toEqual([3, 'agentcli-verify-no-such-program'])
  })

  it('passes agentcli itself: its changelog is empty since its version, and `verify` declares the target it needs', async () => {
    const run = await verify(['--', process.execPath, AGENTCLI])
    expect(run.code, run.stdout.slice(0, 2000)).toBe(0)
    const checks: Array<{ id: string; status: string; evidence: string }> = env(run).data.checks
    const find = (id: string) => checks.find((c) => c.id === id)
    expect(checks.filter((c) => c.status === 'fail')).toEqual([])
    expect(find('self.changelog_since_current')).toMatchObject({ status: 'pass' })
    // Run from its first example, whose target is not in the sandbox: a not-found it also gives on an empty state.
    expect(find('self.output_valid:verify')).toMatchObject({ status: 'skip' })
    expect(find('self.output_valid:verify')?.evidence).toContain('exit 3, E_NOT_FOUND')
    expect(find('self.read_no_side_effects:verify')).toMatchObject({ status: 'pass' })
  }, 120_000)
})

describe('the fuzzer', () => {
  const ref: Ref = {
    tool: 't',
    version: '1.0.0',
    schema_version: '1.0',
    release_readiness: {
      level: 'beta',
      fcc_status: 'verified',
      mock_upstream_status: 'verified',
      live_smoke_status: 'missing',
    },
    global_flags: [],
    commands: [
      {
        path: 'list',
        type: 'read',
        params: [{ name: 'status', kind: 'flag', type: 'enum', required: false, options: ['a', 'b'] }],
        output_schema: {},
        examples: ['t list'],
        stream: false,
        raw: false,
        async: false,
      },
    ],
    error_codes: { E_USAGE: { exit: 2, retryable: false }, E_SERVER: { exit: 7, retryable: true } },
  }

  it('is deterministic for a seed', () => {
    const a = prng(42)
    const b = prng(42)
    expect(Array.from({ length: 5 }, a)).toEqual(Array.from({ length: 5 }, b))
    const r1 = prng(7)
    const r2 = prng(7)
    expect(Array.from({ length: 20 }, () => invocation(r1, ref))).toEqual(
      Array.from({ length: 20 }, () => invocation(r2, ref)),
    )
  })

  it('catches a banner, an exit that disagrees with its code, and a timeout', () => {
    const base = { label: 'x', args: ['list'], stderr: '', timedOut: false, ms: 1 }
    const envelope = (code: string) =>
      JSON.stringify({
        ok: false,
        schema_version: '1.0',
        error: { code, message: 'm', details: {}, retryable: code === 'E_SERVER' },
        meta: { duration_ms: 1 },
      })
    expect(violations({ ...base, code: 2, stdout: envelope('E_USAGE') }, ref)).toEqual([])
    expect(violations({ ...base, code: 0, stdout: `hello\n${envelope('E_USAGE')}` }, ref)[0]).toMatch(
      /one_json_document/,
    )
    expect(violations({ ...base, code: 1, stdout: envelope('E_SERVER') }, ref).join()).toMatch(/exit_from_catalogue/)
    expect(violations({ ...base, code: null, stdout: '', timedOut: true }, ref)).toEqual([
      'timed out with stdin closed',
    ])
    expect(violations({ ...base, args: ['list', '--help'], code: 0, stdout: 'usage' }, ref)).toEqual([])
    // Regression: a compact envelope whose details mention "type" is still an envelope, not an NDJSON line.
    const compact = JSON.stringify({
      ok: false,
      schema_version: '1.0',
      error: { code: 'E_USAGE', message: 'm', details: { allowed: { type: 'integer' } }, retryable: false },
      meta: { duration_ms: 1 },
    })
    expect(violations({ ...base, code: 2, stdout: `${compact}\n` }, ref)).toEqual([])
  })
})
