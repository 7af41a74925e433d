import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CommandDescription } from '../../../src/describe/command.js'
import { toArgv } from '../../../src/mcp/argv.js'
import { argName, MCP_GLOBALS } from '../../../src/mcp/tools.js'
import { invocation, prng } from '../../../src/verify/fuzz.js'
import type { Ref } from '../../../src/verify/reference-types.js'
import { editJson, useToolCopy } from '../../support/copy.js'
import { env, seed, useSandbox } from '../../support/helpers.js'
import { runBinInProcess, tasksInProcess } from '../../support/in-process.js'
import { openSession, sc, withoutDuration } from '../../support/mcp-session.js'
import { poolLog } from '../../support/warm-log.js'

// `--no-input` is no MCP argument either: a call's stdin is closed, so it is always implied.
const SERVER_FLAGS = new Set(['--format', '--json', '--compact', '--pretty', '--quiet', '--help', '-h', '--no-input'])

/**
 * The MCP arguments of a CLI invocation, when it has some: a known command, then flags and positional arguments
 * only (no `--`, and none of the universal flags MCP leaves to the server). Unknown flags stay, as unknown
 * arguments: both surfaces refuse them with E_USAGE.
 */
function fromArgv(
  commands: CommandDescription[],
  argv: string[],
): { tool: string; desc: CommandDescription; args: Record<string, unknown> } | undefined {
  const desc = [...commands]
    .sort((a, b) => b.path.length - a.path.length)
    .find((c) => argv.join(' ').startsWith(`${c.path} `) || argv.join(' ') === c.path)
  if (!desc || desc.path === 'mcp') return undefined
  const rest = argv.slice(desc.path.split(' ').length)
  const args: Record<string, unknown> = {}
  const positional = desc.params.filter((p) => p.kind === 'arg')
  let pos = 0
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!
    if (token === '--' || SERVER_FLAGS.has(token.split('=')[0]!)) return undefined
    if (token.startsWith('--')) {
      const name = token.slice(2)
      const p =
        desc.params.find((x) => x.kind === 'flag' && x.name === name) ??
        (name === 'fields' ? { type: 'string', multiple: false } : undefined)
      const key = argName(name)
      if (key in args) return undefined
      if (!p) args[key] = true
      else if (p.type === 'boolean') args[key] = true
      else {
        const value = rest[++i]
        if (value === undefined || value.startsWith('-')) return undefined
        args[key] = p.multiple ? [value] : value
      }
      continue
    }
    if (token.startsWith('-')) return undefined
    const p = positional[pos]
    if (!p) return undefined
    if (p.multiple) args[argName(p.name)] = [...((args[argName(p.name)] as string[] | undefined) ?? []), token]
    else {
      args[argName(p.name)] = token
      pos++
    }
  }
  return { tool: desc.path.replaceAll(' ', '_'), desc, args }
}

/** What legitimately differs between two runs of one call: fresh tokens, checkpoint ids, times, device codes. */
function normalize(value: unknown): unknown {
  if (typeof value === 'string')
    return value
      .replace(/ct_\d\.[\w-]+\.[\w-]+/g, '<token>')
      .replace(/cp_[0-9a-f]+/g, '<checkpoint>')
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
      .replace(/\b[0-9A-F]{8}\b/g, '<code>')
  if (Array.isArray(value)) return value.map(normalize)
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]))
  return value
}

const sorted = (xs: string[]) => [...xs].sort()

/** The argument names a tool's input schema lists. */
const known = (desc: CommandDescription) =>
  new Set([...desc.params, ...MCP_GLOBALS].map((p) => argName(p.name)).concat(desc.stream ? ['max_items'] : []))

describe('differential: the same invocations through the CLI and MCP (in the server, warm processes and cold starts) give the same envelopes', () => {
  const box = useSandbox()
  const copy = useToolCopy()

  it("a seeded sample of the fuzzer's corpus, and hand-picked calls of every kind; then reads four at a time", async () => {
    seed(box(), [
      { id: '1', title: 'one' },
      { id: '2', title: 'two', status: 'done' },
    ])
    const ref = env(await tasksInProcess(box(), ['reference'])).data as Ref & { commands: CommandDescription[] }
    const r = prng(7)
    const corpus = Array.from({ length: 140 }, () => invocation(r, ref).args)
    const hand = [
      ['get', '1'],
      ['list', '--limit', '1'],
      ['list', '--status', 'done', '--fields', 'id'],
      ['edit', '1', '--title', 'new', '--dry-run'],
      ['delete', '1', '2', '--dry-run'],
      ['delete', '9'],
      ['create', '--title', 't', '--idempotency-key', 'k1'],
      ['job', 'list'],
      ['whoami'],
      ['login'],
      ['export', '--status', 'open'],
      ['changelog'],
    ]
    const cases = [...hand, ...corpus].map((argv) => ({ argv, mcp: fromArgv(ref.commands, argv) })).filter((c) => c.mcp)
    expect(cases.length).toBeGreaterThanOrEqual(60)
    // Reads in the server's own process (agentcli.mcp.in_process_reads): every read the server is free for runs in
    // it, every other call in a warm process or a cold start; all must answer the CLI's envelope.
    const dir = copy('examples/tasks', (d) =>
      editJson(join(d, 'package.json'), (pkg) => {
        pkg.agentcli = { ...(pkg.agentcli as object), mcp: { in_process_reads: true } }
      }),
    )
    const bin = join(dir, 'bin/run.js')
    // The CLI side is the same copy (its next-step hints name its own bin), run in this process: the oracle is the
    // envelope the CLI prints, which an in-process run prints byte for byte (test/cli/runtime/in-process.test.ts);
    // only the MCP side needs the server and its processes.
    const tasks = (b: typeof box, argv: readonly string[], options: { validateOutput?: boolean } = {}) =>
      runBinInProcess(bin, argv, { ...options, env: b().env })
    const s = await openSession(box(), { bin })
    let compared = 0
    const codes: string[] = []
    // Which process served each call the server started: a warm one (agentcli.mcp.warm_processes, 2 by default,
    // refilled after every call) or a cold start; both must give the CLI's envelope.
    const served = () => poolLog(s.stderr()).served
    // The first call finds the pool ready.
    await until(() => s.stderr().match(/mcp: warm process ready/g)?.length === 2)
    try {
      for (const c of cases) {
        const { tool, desc, args } = c.mcp!
        const unknown = Object.keys(args).find((k) => !known(desc).has(k))
        if (unknown) {
          // An unknown flag: the server refuses it before any process, E_USAGE naming the tool's arguments; the CLI
          // refuses the call too (E_USAGE, or E_VALIDATION when a bad value comes first in its parse).
          const viaMcp = sc(await s.client.callTool({ name: tool, arguments: args }))
          const cli = await tasks(box, c.argv, { validateOutput: false })
          const fromCli = desc.stream ? gatherStream(cli.stdout) : JSON.parse(cli.stdout)
          expect(viaMcp.error, JSON.stringify(c.argv)).toMatchObject({ code: 'E_USAGE', details: { got: unknown } })
          expect(fromCli.error?.code, JSON.stringify(c.argv)).toMatch(/^E_(USAGE|VALIDATION)$/)
          compared++
          codes.push('E_USAGE')
          continue
        }
        const argv = toArgv(desc, args)
        // The mapping is faithful: the CLI call an MCP call makes has exactly the invocation's words.
        expect(sorted(argv), JSON.stringify(c.argv)).toEqual(sorted(c.argv))
        const viaMcp = await s.client.callTool({ name: tool, arguments: args })
        const cli = await tasks(box, argv, { validateOutput: false })
        const fromCli = desc.stream ? gatherStream(cli.stdout) : JSON.parse(cli.stdout)
        expect(normalize(withoutDuration(sc(viaMcp))), JSON.stringify(c.argv)).toEqual(
          normalize(withoutDuration(fromCli)),
        )
        expect(viaMcp.isError).toBe(fromCli.ok !== true)
        compared++
        codes.push(fromCli.ok ? `ok:${tool}` : fromCli.error.code)
      }
      const sequential = served()
      expect(sequential[0]).toBe(true)
      // One at a time, every read that reached a run ran in the server: none of them went to a process.
      const inServer = poolLog(s.stderr()).inProcess
      expect(inServer.length).toBeGreaterThanOrEqual(10)
      expect(inServer).toContain('get 1')
      // Warm only on a ready process, cold only when none was ready (read from the log's order, not from timing).
      expect(poolLog(s.stderr()).violations).toEqual([])

      // Reads four at a time against two warm processes: the ones beyond what is ready start cold, same envelopes.
      const reads = cases.filter(
        (c) => c.mcp!.desc.type === 'read' && Object.keys(c.mcp!.args).every((k) => known(c.mcp!.desc).has(k)),
      )
      expect(reads.length).toBeGreaterThanOrEqual(20)
      // The first batch meets a full pool.
      await until(() => poolLog(s.stderr()).idle.length === 2)
      for (let i = 0; i < reads.length; i += 4) {
        const batch = reads.slice(i, i + 4)
        const viaMcp = await Promise.all(
          batch.map((c) => s.client.callTool({ name: c.mcp!.tool, arguments: c.mcp!.args })),
        )
        for (const [j, c] of batch.entries()) {
          const cli = await tasks(box, toArgv(c.mcp!.desc, c.mcp!.args), { validateOutput: false })
          const fromCli = c.mcp!.desc.stream ? gatherStream(cli.stdout) : JSON.parse(cli.stdout)
          expect(normalize(withoutDuration(sc(viaMcp[j]))), JSON.stringify(c.argv)).toEqual(
            normalize(withoutDuration(fromCli)),
          )
        }
      }
      const concurrent = served().slice(sequential.length)
      expect(concurrent[0]).toBe(true)
      // Four at a time: the server ran one of a batch at most, the others went to processes, never waiting.
      expect(poolLog(s.stderr()).inProcess.length).toBeGreaterThan(inServer.length)
      expect(poolLog(s.stderr()).violations).toEqual([])
    } finally {
      await s.close()
    }
    expect(compared).toBe(cases.length)
    // The sample spans successes and the error classes, not one kind of refusal.
    expect(codes.filter((c) => c.startsWith('ok:')).length).toBeGreaterThanOrEqual(8)
    expect(new Set(codes.filter((c) => c.startsWith('E_'))).size).toBeGreaterThanOrEqual(5)
  }, 300_000)
})

async function until(ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** A CLI stream's NDJSON as the one envelope the MCP tool returns for it (no cut: the corpus streams are small). */
// biome-ignore lint/suspicious/noExplicitAny: envelopes are compared structurally
function gatherStream(stdout: string): any {
  const lines = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  const last = lines.at(-1)
  if (last.ok === false) return { ok: false, schema_version: last.schema_version, error: last.error, meta: last.meta }
  return {
    ok: true,
    schema_version: last.schema_version,
    data: { items: lines.filter((l) => l.type === 'item').map((l) => l.data), summary: last.data },
    meta: last.meta,
  }
}
