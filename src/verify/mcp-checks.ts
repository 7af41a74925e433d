import { isDeepStrictEqual } from 'node:util'
import type { CommandDescription } from '../describe/command.js'
import { toolAnnotations } from '../mcp/annotations.js'
import { toArgv } from '../mcp/argv.js'
import { argName, DESCRIBE_TOOL, inputSchemaOf, OUTPUT_SCHEMA_META, outputSchemaOf, toolName } from '../mcp/tools.js'
import { call, json, type Target } from './call.js'
import { McpProbe, type RpcAnswer } from './mcp-client.js'
import type { Ref, RefCommand, RefParam } from './reference-types.js'
import type { Report } from './report.js'

type Tool = {
  name: string
  inputSchema?: unknown
  outputSchema?: unknown
  annotations?: Record<string, unknown>
  _meta?: Record<string, unknown>
}
type Verdict = { ok: boolean | undefined; code: string | undefined }

/** Arguments that satisfy a command's required params (the first option, the minimum, a plain word). */
export function sampleArgs(c: RefCommand): Record<string, unknown> {
  const args: Record<string, unknown> = {}
  for (const p of c.params as Array<RefParam & { minimum?: number }>) {
    if (!p.required) continue
    const value =
      p.options?.[0] ?? (p.type === 'integer' ? (p.minimum ?? 1) : p.type === 'boolean' ? true : 'agentcli-verify')
    args[argName(p.name)] = p.multiple ? [value] : value
  }
  return args
}

/** The write flow's own flags: a gate probe leaves them out, so the call carries no token and no preview. */
const FLOW_PARAMS = new Set(['confirm', 'dry-run', 'idempotency-key', 'fields'])

/**
 * Arguments for probing a write's gate: the required ones, plus every other string a person would type (a title
 * the command would otherwise ask for), so the call reaches the gate instead of stopping at missing input.
 */
function gateArgs(c: RefCommand): Record<string, unknown> {
  const args = sampleArgs(c)
  for (const p of c.params as Array<RefParam & { default?: unknown; deprecated?: unknown }>) {
    if (p.required || p.type !== 'string' || p.multiple || FLOW_PARAMS.has(p.name)) continue
    if ((p.default !== undefined && p.default !== null) || p.deprecated !== undefined) continue
    args[argName(p.name)] = p.options?.[0] ?? 'agentcli-verify'
  }
  return args
}

function verdictOf(envelope: unknown): Verdict {
  const e = envelope as { ok?: unknown; error?: { code?: unknown } } | undefined
  return {
    ok: typeof e?.ok === 'boolean' ? e.ok : undefined,
    code: typeof e?.error?.code === 'string' ? e.error.code : undefined,
  }
}

/** The verdict of the CLI for one argv (a stream's last line). */
async function cliVerdict(t: Target, c: RefCommand, argv: string[]): Promise<Verdict> {
  const run = await call(t, `mcp:cli ${c.path}`, argv)
  if (!c.stream) return verdictOf(json(run))
  const last = run.stdout.trim().split('\n').at(-1) ?? ''
  try {
    return verdictOf(JSON.parse(last))
  } catch {
    return { ok: undefined, code: undefined }
  }
}

function mcpVerdict(answer: { result?: Record<string, unknown> }): Verdict & { isError: unknown; text: string } {
  const r = answer.result
  const text = ((r?.content as Array<{ text?: string }> | undefined) ?? []).map((c) => c.text ?? '').join('\n')
  return { ...verdictOf(r?.structuredContent), isError: r?.isError, text }
}

const same = (a: Verdict, b: Verdict) => a.ok === b.ok && a.code === b.code
const show = (v: Verdict) => (v.ok ? 'ok' : (v.code ?? 'no envelope'))

/**
 * Check a tool's MCP surface (`<command> mcp`) against its `reference`: one tool per command, the schemas and
 * annotations `reference` implies, the CLI's codes on every call, the write gate, and a bad argument answered as a
 * tool error by a server that stays up.
 */
export async function runMcpChecks(t: Target, report: Report, ref: Ref): Promise<void> {
  // The second connection is a server of its own that only opens: it starts while the first one's checks run,
  // and its check is reported after theirs, as before.
  const revisions = discoverRevisions(t)
  // Awaited below; a failure to start it must not count as unhandled while the first checks run.
  revisions.catch(() => undefined)
  await surfaceChecks(t, report, ref)
  revisionCheck(report, await revisions)
}

async function surfaceChecks(t: Target, report: Report, ref: Ref): Promise<void> {
  const probe = new McpProbe(t)
  try {
    const init = await probe.initialize()
    const listed = init.result ? await probe.listTools() : { tools: [], error: init.error?.message }
    report.add(
      'mcp.starts',
      'mcp',
      Boolean(init.result) && !listed.error,
      init.result && !listed.error
        ? `${listed.tools.length} tools listed`
        : `no MCP session: ${init.error?.message ?? listed.error}; stderr: ${probe.log().slice(-300)}`,
    )
    if (!init.result || listed.error) return
    const tools = new Map((listed.tools as Tool[]).map((x) => [x.name, x]))
    const commands = ref.commands.filter((c) => c.path !== 'mcp')
    const expected = commands.map((c) => toolName(c.path))
    // A listing past its budget points output schemas at describe_tool: that one tool is no command's.
    const pointed = [...tools.values()].some((x) => x._meta?.[OUTPUT_SCHEMA_META] === DESCRIBE_TOOL)
    const missing = expected.filter((n) => !tools.has(n))
    const extra = [...tools.keys()].filter((n) => !expected.includes(n) && !(pointed && n === DESCRIBE_TOOL))
    const dupes = listed.tools.length !== tools.size
    report.add(
      'mcp.one_tool_per_command',
      'mcp',
      !missing.length && !extra.length && !dupes,
      missing.length || extra.length || dupes
        ? `missing ${JSON.stringify(missing)}, extra ${JSON.stringify(extra)}${dupes ? ', duplicate names' : ''}`
        : `${expected.length} commands, ${tools.size} tools`,
    )

    const schemaDiffs: string[] = []
    const annotationDiffs: string[] = []
    let described = 0
    for (const c of commands) {
      const tool = tools.get(toolName(c.path))
      if (!tool) continue
      const desc = c as unknown as CommandDescription
      if (!isDeepStrictEqual(tool.inputSchema, inputSchemaOf(desc))) schemaDiffs.push(`${tool.name}.inputSchema`)
      if (
        tool.outputSchema !== undefined ||
        tool._meta?.[OUTPUT_SCHEMA_META] !== DESCRIBE_TOOL ||
        !tools.has(DESCRIBE_TOOL)
      ) {
        if (!isDeepStrictEqual(tool.outputSchema, outputSchemaOf(desc))) schemaDiffs.push(`${tool.name}.outputSchema`)
      } else {
        // Left out of the listing: the full definition describe_tool returns must be the one reference implies.
        const full = (await probe.callTool(DESCRIBE_TOOL, { name: tool.name })).result?.structuredContent as
          | Tool
          | undefined
        described++
        if (!isDeepStrictEqual(full?.inputSchema, inputSchemaOf(desc)))
          schemaDiffs.push(`${tool.name}.inputSchema (describe_tool)`)
        if (!isDeepStrictEqual(full?.outputSchema, outputSchemaOf(desc)))
          schemaDiffs.push(`${tool.name}.outputSchema (describe_tool)`)
      }
      const want = toolAnnotations(desc) as Record<string, boolean>
      const got = tool.annotations ?? {}
      const off = Object.keys(want).filter((k) => got[k] !== want[k])
      if (off.length)
        annotationDiffs.push(
          `${tool.name} (${c.type}): ${off.map((k) => `${k}=${String(got[k])}, want ${want[k]}`).join(', ')}`,
        )
    }
    report.add(
      'mcp.schemas_equal',
      'mcp',
      schemaDiffs.length === 0,
      schemaDiffs.length
        ? `differ from reference: ${schemaDiffs.slice(0, 8).join(', ')}`
        : `every input and output schema is the one reference implies${described ? ` (${described} output schemas through ${DESCRIBE_TOOL})` : ''}`,
    )
    report.add(
      'mcp.annotations_match_kinds',
      'mcp',
      annotationDiffs.length === 0,
      annotationDiffs.length
        ? annotationDiffs.slice(0, 5).join('; ')
        : 'read-only, destructive, idempotent and open-world hints follow each command’s kind and declarations',
    )

    const codeDiffs: string[] = []
    let compared = 0
    for (const c of commands.filter((x) => x.type !== 'write' && tools.has(toolName(x.path))).slice(0, 12)) {
      const args = sampleArgs(c)
      const cli = await cliVerdict(t, c, toArgv(c as unknown as CommandDescription, args))
      const mcp = mcpVerdict(await probe.callTool(toolName(c.path), args))
      compared++
      const textOk = mcp.ok !== false || (mcp.code !== undefined && mcp.text.includes(mcp.code))
      if (!same(cli, mcp) || mcp.isError !== (mcp.ok !== true) || !textOk)
        codeDiffs.push(
          `${toolName(c.path)}: CLI ${show(cli)}, MCP ${show(mcp)}${mcp.isError !== (mcp.ok !== true) ? ` with isError ${String(mcp.isError)}` : ''}${textOk ? '' : ' (code not in the text)'}`,
        )
    }
    report.add(
      'mcp.codes_preserved',
      'mcp',
      codeDiffs.length === 0,
      codeDiffs.length
        ? codeDiffs.slice(0, 5).join('; ')
        : `${compared} calls answered with the CLI's envelope verdict (ok, error.code), isError = !ok`,
    )

    const gateDiffs: string[] = []
    const writes = commands.filter((x) => x.type === 'write' && tools.has(toolName(x.path)))
    for (const c of writes) {
      const tool = tools.get(toolName(c.path))!
      const props = ((tool.inputSchema as { properties?: Record<string, unknown> } | undefined)?.properties ??
        {}) as Record<string, unknown>
      if (!props.dry_run || !props.confirm) gateDiffs.push(`${tool.name}: no dry_run/confirm arguments`)
      const args = gateArgs(c)
      const cli = await cliVerdict(t, c, toArgv(c as unknown as CommandDescription, args))
      const mcp = mcpVerdict(await probe.callTool(tool.name, args))
      if (mcp.ok !== false) gateDiffs.push(`${tool.name}: called without a token it answered ${show(mcp)}`)
      else if (!same(cli, mcp)) gateDiffs.push(`${tool.name}: CLI ${show(cli)}, MCP ${show(mcp)}`)
    }
    report.add(
      'mcp.writes_gated',
      'mcp',
      writes.length === 0 ? 'skip' : gateDiffs.length === 0,
      writes.length === 0
        ? 'no write commands'
        : gateDiffs.length
          ? gateDiffs.slice(0, 5).join('; ')
          : `${writes.length} write tools refuse a call without a token as the CLI does`,
    )

    const target = commands.find((c) => c.params.some((p) => p.type === 'string' && !p.multiple)) ?? commands[0]
    if (target) {
      const p = target.params.find((x) => x.type === 'string' && !x.multiple)
      const bad = mcpVerdict(
        await probe.callTool(toolName(target.path), {
          ...sampleArgs(target),
          ...(p ? { [argName(p.name)]: { agentcli_verify: true } } : { agentcli_verify_bogus: true }),
        }),
      )
      const after = await probe.listTools()
      const ok =
        bad.isError === true && bad.code !== undefined && !after.error && after.tools.length === listed.tools.length
      report.add(
        'mcp.bad_argument',
        'mcp',
        ok,
        ok
          ? `a malformed argument is a tool error (${bad.code}) and the server stays up`
          : `bad argument answered isError ${String(bad.isError)}, code ${bad.code ?? 'none'}; afterwards ${after.error ?? `${after.tools.length} tools`}`,
      )
    }
  } finally {
    probe.close()
  }
}

/** The stateless revision is chosen by the opening exchange, so it is asked of a connection of its own. */
async function discoverRevisions(t: Target): Promise<RpcAnswer> {
  const modern = new McpProbe(t)
  try {
    return await modern.discover()
  } finally {
    modern.close()
  }
}

/** `mcp.revisions`: the second connection's `server/discover` offers 2026-07-28. */
function revisionCheck(report: Report, found: RpcAnswer): void {
  const versions = (found.result?.supportedVersions as string[] | undefined) ?? []
  report.add(
    'mcp.revisions',
    'mcp',
    versions.includes('2026-07-28'),
    versions.includes('2026-07-28')
      ? `initialize (2025-11-25) and server/discover (${versions.join(', ')}) both answered`
      : `server/discover did not offer 2026-07-28: ${found.error?.message ?? JSON.stringify(versions)}`,
  )
}
