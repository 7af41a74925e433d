import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { editJson, useToolCopy } from '../../support/copy.js'
import { env, seed, TASKS_BIN, useSandbox } from '../../support/helpers.js'
import { runBinInProcess, tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * Hints, previews, suggestions and readiness in-process (test/support/in-process.ts). Hints run as printed (a shell,
 * PATH, the bin) and a job's: test/cli/contract/contract-hints.test.ts.
 */
const box = useSandbox()
const BARE_PATH = `${dirname(process.execPath)}:/usr/bin:/bin`
const copy = useToolCopy()

describe('next-step hints run exactly as printed', () => {
  it("the bare invocation's hint to run reference is runnable", async () => {
    const run = await tasks(box(), [], { env: { PATH: BARE_PATH } })
    expect(env(run).data.hint).toContain(`\`node ${TASKS_BIN} reference\``)
  })
})

describe('a dry-run shows what will change; drift names the target and its versions', () => {
  it("import's preview holds the parsed tasks (bounded, with a count) and the lines that would fail", async () => {
    const file = join(box().root, 'in.jsonl')
    const lines = Array.from({ length: 25 }, (_, i) => JSON.stringify({ title: `t${i + 1}`, status: 'done' }))
    writeFileSync(file, `${lines.join('\n')}\nnot json\n{"title":""}\n`)
    const after = env(await tasks(box(), ['import', '--file', file, '--dry-run'])).data.preview.changes[0].after
    expect(after).toMatchObject({ file, lines: 27, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(after.tasks.count).toBe(25)
    expect(after.tasks.truncated).toBe(true)
    expect(after.tasks.items).toHaveLength(20)
    expect(after.tasks.items[0]).toEqual({ title: 't1', status: 'done' })
    expect(after.invalid_lines).toEqual({
      items: [
        { line: 26, reason: 'not valid JSON' },
        { line: 27, reason: 'title must be a non-empty string' },
      ],
      count: 2,
      truncated: false,
    })
  })

  it('E_CONFLICT for a file changed after the dry-run: state_drift, nothing imported, the dry-run to redo', async () => {
    const file = join(box().root, 'in.jsonl')
    writeFileSync(file, '{"title":"a"}\n')
    const dry = env(await tasks(box(), ['import', '--file', file, '--dry-run'])).data
    // A path and a SHA-256 do not fit in a 200-character token: the target is bound by digest only.
    expect(dry.confirm_token.length).toBeLessThanOrEqual(200)
    writeFileSync(file, '{"title":"b"}\n')
    const run = await tasks(box(), ['import', '--file', file, '--confirm', dry.confirm_token])
    expect(run.code).toBe(6)
    const error = env(run).error
    expect(error.message).toContain('the targets moved since the dry-run')
    expect(error.details).toMatchObject({ reason: 'state_drift', drift: [] })
    expect(error.details.dry_run_command).toMatch(/ import --file .* --dry-run$/)
  })

  it('E_CONFLICT for an edited task names it with both versions', async () => {
    seed(box(), [{ id: '1', title: 'first' }])
    const dry = env(await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run'])).data
    const other = env(await tasks(box(), ['edit', '1', '--title', 'moved', '--dry-run'])).data
    expect((await tasks(box(), ['edit', '1', '--title', 'moved', '--confirm', other.confirm_token])).code).toBe(0)
    const run = await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', dry.confirm_token])
    expect(env(run).error.code).toBe('E_CONFLICT')
    expect(env(run).error.message).toMatch(/1 \(version 1 then, 2 now\)/)
  })
})

describe('suggestions have one shape everywhere', () => {
  it('a list of names for a command, a flag, and a flag written --name=value (never the value)', async () => {
    const command = env(await tasks(box(), ['lst'])).error.details
    const flag = env(await tasks(box(), ['list', '--limt', '3'])).error.details
    const inline = env(await tasks(box(), ['list', '--limt=canary-value-77'])).error
    expect(command.suggestions).toEqual(['list'])
    expect(flag.suggestions).toEqual(['--limit'])
    expect(inline.details.suggestions).toEqual(['--limit'])
    expect(inline.message).toBe('Unknown flag: --limt. Did you mean --limit?')
    expect(JSON.stringify(inline)).not.toContain('canary-value-77')
    const two = env(await tasks(box(), ['list', '--limt=1', '--stauts=open'])).error.details
    expect(two.suggestions).toEqual(['--limit', '--status'])
  })

  it('the text error lists them the same way', async () => {
    const run = await tasks(box(), ['list', '--lmit', '3', '--format', 'text'])
    expect(run.stderr).toContain('Did you mean --limit?')
  })
})

describe('release readiness, exactly as seed 002 §11/§13', () => {
  const readiness = async (declared: Record<string, string> | undefined) => {
    const dir = copy('test/fixtures/cli', (d) =>
      editJson(join(d, 'package.json'), (p) => {
        const agentcli = p.agentcli as Record<string, unknown>
        if (declared === undefined) delete agentcli.release_readiness
        else agentcli.release_readiness = declared
      }),
    )
    const bin = join(dir, 'bin/run.js')
    const ref = env(await runBinInProcess(bin, ['reference'], { env: box().env })).data.release_readiness
    const checks = env(await runBinInProcess(bin, ['doctor'], { env: box().env })).data.checks
    return { ref, check: checks.find((c: { check: string }) => c.check === 'release_readiness') }
  }
  const full = { fcc_status: 'verified', mock_upstream_status: 'verified' }

  it('live_smoke_status not_applicable cannot make a tool stable: it is beta, and the fix asks for a live run', async () => {
    const { ref, check } = await readiness({ ...full, live_smoke_status: 'not_applicable' })
    expect(ref.level).toBe('beta')
    expect(check.status).toBe('warn')
    expect(check.fix).toContain('live_smoke_status is not_applicable')
    expect(check.fix).not.toMatch(/fcc_status|mock_upstream_status/)
  })

  it('declaring stable on not_applicable live smoke is a claim not backed: unpublishable, fail', async () => {
    const { ref, check } = await readiness({ level: 'stable', ...full, live_smoke_status: 'not_applicable' })
    expect(ref.level).toBe('unpublishable')
    expect(ref.reason).toContain('live_smoke_status is not_applicable')
    expect(check.status).toBe('fail')
  })

  it('the fix names only the evidence that is missing and applies (mock upstream not applicable: not asked)', async () => {
    const { ref, check } = await readiness({
      fcc_status: 'missing',
      mock_upstream_status: 'not_applicable',
      live_smoke_status: 'verified',
    })
    expect(ref.level).toBe('unpublishable')
    expect(ref.required_evidence).not.toContain('mock_upstream_contract_tests')
    expect(check.fix).toContain('fcc_status is missing')
    expect(check.fix).not.toMatch(/mock_upstream_status|live_smoke_status/)
    const stable = await readiness({
      fcc_status: 'verified',
      mock_upstream_status: 'not_applicable',
      live_smoke_status: 'verified',
    })
    expect(stable.ref.level).toBe('stable')
    expect(stable.check).toMatchObject({ status: 'pass', fix: null })
  })

  it('a tool that declares nothing is honestly unpublishable, and doctor says how to declare', async () => {
    const { ref, check } = await readiness(undefined)
    expect(ref).toMatchObject({ level: 'unpublishable', fcc_status: 'unknown', mock_upstream_status: 'unknown' })
    expect(ref.reason).toContain('no release evidence declared')
    expect(check.status).toBe('fail')
    expect(check.fix).toContain('agentcli.release_readiness')
    expect(check.fix).toContain('"fcc_status"')
  })
})
