import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runTool, type Sandbox, sandbox } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONFORMANCE_BASELINE } from '../../../src/verify/conformance.js'
import { tasksServer, useColdTasks } from '../../support/cold-tasks.js'
import { ROOT } from '../../support/helpers.js'
import { startMcpHttp } from '../../support/mcp-raw.js'

// `agentcli verify --mcp --conformance --url`: the official suite against any Streamable HTTP MCP server by its
// URL. "Any server" here is the example's `tasks mcp --http`, started by this file and judged as a stranger: no
// agentcli baseline applies unless a --baseline file says so. One suite run per revision: 2025-11-25 with a
// baseline file (agentcli's own for that revision, copied), 2026-07-28 without one. The refusals of the flags are
// in-process: test/unit/verify/verify-conformance-url.test.ts.

const AGENTCLI = join(ROOT, 'bin/agentcli.js')

type Check = { id: string; status: string; evidence: string }
// biome-ignore lint/suspicious/noExplicitAny: the report is read loosely
const reportOf = (json: any) => json.data ?? json.error?.details
const checksOf = (json: unknown): Check[] => reportOf(json)?.checks ?? []

// The suite is not about the warm pool: the server starts none (cold-tasks.ts).
useColdTasks()
let box: Sandbox
let server: Awaited<ReturnType<typeof startMcpHttp>>
beforeAll(async () => {
  box = sandbox('agentcli-conformance-url-')
  const example = tasksServer()
  server = await startMcpHttp(example.bin, { ...box.env, ...example.env })
})
afterAll(async () => {
  await server?.stop()
  box?.cleanup()
})

// The suite comes from the author's devDependencies: here, this repository's (the working directory).
const verify = (options: string[]) =>
  runTool(AGENTCLI, ['verify', '--mcp', '--conformance', '--url', server.url, ...options], {
    timeoutMs: 120_000,
    cwd: ROOT,
  })

describe('agentcli verify --mcp --conformance --url', () => {
  it('passes a server with the baseline that fits it: its expected failures skipped with the file’s reasons', async () => {
    const file = join(box.root, 'baseline.json')
    writeFileSync(file, JSON.stringify({ '2025-11-25': CONFORMANCE_BASELINE['2025-11-25'] }))
    const run = await verify(['--revision', '2025-11-25', '--baseline', file])
    expect(run.code, run.stdout).toBe(0)
    // No command: the target is the URL, the tool and version what the server says of itself.
    expect(reportOf(run.json)).toMatchObject({ target: server.url, tool: 'tasks', release_level: null, fuzz: null })
    const checks = checksOf(run.json)
    const by = (id: string) => checks.find((c) => c.id === id)
    // The checks of --mcp need a command's reference: the report says they did not run, and why.
    expect(by('mcp.reference')).toMatchObject({ status: 'skip', evidence: /not run with --url/ })
    expect(by('mcp.conformance.server')).toMatchObject({ status: 'pass', evidence: /answers initialize \(tasks / })
    expect(by('mcp.conformance.baseline')?.evidence).toMatch(/^--baseline .*baseline\.json: 2025-11-25: \d+ expected/)
    expect(by('mcp.conformance.2025-11-25.tools-list')?.status).toBe('pass')
    expect(by('mcp.conformance.2025-11-25.prompts-list')).toMatchObject({
      status: 'skip',
      evidence: `expected failure: ${CONFORMANCE_BASELINE['2025-11-25']['prompts-list']}`,
    })
    // --revision: the other requirement set is not run.
    expect(checks.filter((c) => c.id.startsWith('mcp.conformance.2026-07-28.'))).toEqual([])
    expect(checks.filter((c) => c.status === 'fail')).toEqual([])
  }, 120_000)

  it('without a baseline, every failing scenario fails, each named', async () => {
    const run = await verify(['--revision', '2026-07-28'])
    expect(run.code, run.stdout).toBe(1)
    // biome-ignore lint/suspicious/noExplicitAny: the envelope is read loosely
    const error = (run.json as any).error
    expect(error.code).toBe('E_CONFORMANCE')
    expect(checksOf(run.json).find((c) => c.id === 'mcp.conformance.baseline')?.evidence).toMatch(/^no --baseline/)
    // Exactly the scenarios agentcli's baseline excuses for its own servers: nothing of it is applied to a URL.
    const failed = checksOf(run.json).filter((c) => c.status === 'fail')
    const expected = Object.keys(CONFORMANCE_BASELINE['2026-07-28']).map((s) => `mcp.conformance.2026-07-28.${s}`)
    expect(failed.map((c) => c.id).sort()).toEqual(expected.sort())
    for (const id of expected) expect(error.message).toContain(id)
    // The evidence is the suite's failing check, not a reason from a baseline.
    expect(failed.find((c) => c.id.endsWith('.tasks-lifecycle'))?.evidence).not.toMatch(/expected failure/)
    expect(checksOf(run.json).find((c) => c.id === 'mcp.conformance.2026-07-28.tools-list')?.status).toBe('pass')
  }, 120_000)
})
