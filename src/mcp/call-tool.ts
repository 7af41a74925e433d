import type { CommandDescription } from '../describe/command.js'
import { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import { toAgentError } from '../errors/normalize.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { toolEnv } from '../settings/tool-env.js'
import { UNIVERSAL_FLAGS } from '../universal-flags/table.js'
import {
  APPROVAL_SCHEMA,
  approvalMessage,
  type Caps,
  checkpointOf,
  checkpointRequest,
  dryRunOf,
  elicitModes,
  resumeArgv,
} from './_flows.js'
import { toArgv } from './argv.js'
import { runsInProcess } from './in-process-setting.js'
import { callLogging, type LogCtx } from './logging.js'
import { policyFlow } from './policy-flow.js'
import { type FlowState, flowStateOf } from './request-state.js'
import { errorEnvelopeOf, mcpHint, toolResult } from './result.js'
import { type Launcher, runCall } from './run-call.js'
import type { TaskSurface } from './tasks.js'
import { DEFAULT_MAX_ITEMS, MAX_ITEMS_CAP, type ToolDef } from './tools.js'

/** Universal flags that are the server's business: an MCP call always answers one JSON envelope. */
const RESERVED = new Set(
  Object.entries(UNIVERSAL_FLAGS)
    .filter(([, flag]) => 'mcp' in flag && flag.mcp === 'server')
    .map(([name]) => name),
)

type Sdk = typeof import('@modelcontextprotocol/server')

/** Where a 2026-07-28 request carries its client capabilities. */
const CAPS = 'io.modelcontextprotocol/clientCapabilities'

/** What a tool handler reads of the SDK's request context. */
export type Ctx = {
  mcpReq: LogCtx['mcpReq'] & {
    signal: AbortSignal
    inputResponses?: Record<string, unknown>
    requestState: () => unknown
  }
}

/** Who a call over HTTP acts for: the authenticated subject and its issuer, when the transport has one. */
export type CallPrincipal = { subject: string; issuer: string } | undefined

/** Seals flow state for the call's principal (see ./request-state.ts). */
export type Codec = { mint(payload: FlowState): Promise<string> }

/**
 * The handler of every tool: map the arguments to the CLI call and run it; for a write called without a token by
 * a client that can show a form, ask the person first; for a checkpoint, hand the person's step to the client;
 * on the retry of either round, carry on from the sealed state.
 */
export function callHandler(
  sdk: Sdk,
  server: InstanceType<Sdk['McpServer']>,
  codec: Codec,
  launcher: Launcher,
  catalogue: Catalogue,
  approval: boolean,
  principal?: CallPrincipal,
  /** Whether a round trip to the person can come back here (not on stateless 2025-era HTTP: no session). */
  canAsk = true,
  /** The tool's config: where a person's approval of a held change is filed (see ./policy-flow.ts). */
  config?: ToolConfig,
  /** The tasks extension: an async command's submission becomes a task for a client that asked for tasks. */
  tasks?: TaskSurface,
) {
  // Who the call acts for reaches the CLI as its principal's subject: bound into its tokens, keys and audit line.
  const env = principal
    ? { [toolEnv(launcher.bin).name('MCP_SUBJECT')]: JSON.stringify({ iss: principal.issuer, sub: principal.subject }) }
    : undefined
  const policy = policyFlow({ sdk, server, codec, launcher, catalogue, principal, config })
  const logging = callLogging(server, launcher.bin)
  // Every call this handler runs, logged once it answered.
  const runLogged = async (ctx: Ctx, argv: string[], options: Parameters<typeof runCall>[2]) => {
    const started = performance.now()
    const result = await runCall(launcher, argv, options)
    logging.call(ctx, {
      argv,
      ran: result.ran ?? 'cold',
      code: (result.envelope.error as { code?: string } | undefined)?.code ?? null,
      ms: performance.now() - started,
      stderr: result.stderr ?? '',
    })
    return result
  }
  const handle = async (
    def: ToolDef,
    desc: CommandDescription,
    args: Record<string, unknown>,
    ctx: Ctx,
  ): Promise<unknown> => {
    const signal = ctx.mcpReq.signal
    const reserved = Object.keys(args).find((k) => RESERVED.has(k))
    if (reserved) {
      const error = new AgentError(
        'E_USAGE',
        `${reserved} is not an argument of the ${def.name} tool: MCP results are always the JSON envelope`,
        {
          details: { got: reserved, allowed: Object.keys((def.inputSchema.properties ?? {}) as object) },
        },
      )
      return toolResult(errorEnvelopeOf(error, catalogue))
    }
    const caps = (ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities'] ??
      server.server.getClientCapabilities()) as Caps
    const modes = canAsk ? elicitModes(caps) : { form: false, url: false }
    const run = async (argv: string[], ask = true) => {
      const result = await runLogged(ctx, argv, {
        signal,
        ...(env ? { env } : {}),
        stream: desc.stream,
        // Only the plain call of a read: a resumed or approved call runs what its state says, as a process.
        inProcess: argv === plain && runsInProcess(desc),
        maxItems: Math.min(Number(args.max_items ?? DEFAULT_MAX_ITEMS) || DEFAULT_MAX_ITEMS, MAX_ITEMS_CAP),
      })
      // A change the policy holds: asked of a person at the host only when the system policy allows it.
      if (policy.held(result.envelope))
        return (ask && approval && modes.form && (await policy.ask(def, desc, result.envelope))) || answer(result)
      if (tasks && desc.async) {
        const task = await tasks.created(result.envelope, ctx.mcpReq.envelope?.[CAPS], principal)
        if (task) return task
      }
      const checkpoint = checkpointOf(result.envelope)
      const request = ask && checkpoint ? checkpointRequest(sdk.inputRequired, checkpoint, modes) : undefined
      if (checkpoint && request) {
        // A client that speaks tasks gets a task waiting for the person instead (SEP-2663): the answer may come
        // whenever the person is done, to any server of the tool, and the resume runs as a job of the same task.
        const task = tasks && (await tasks.paused(argv, result.envelope, ctx.mcpReq.envelope?.[CAPS], principal))
        if (task) return task
        return sdk.inputRequired({
          inputRequests: { human: request },
          requestState: await codec.mint({ kind: 'resume', resume: checkpoint.resume, tool: def.name }),
        })
      }
      return answer(result)
    }
    const answer = (result: { envelope: Record<string, unknown> }) =>
      toolResult(result.envelope, mcpHint(result.envelope, def.name))
    const argv = toArgv(desc, args)
    const plain = argv
    const state = flowStateOf(ctx.mcpReq.requestState(), def.name)
    if (state?.kind === 'approve') {
      const view = sdk.inputResponse(ctx.mcpReq.inputResponses, 'approve')
      // Only a person's explicit yes applies the change; anything else is the plain gate's refusal.
      const yes = view.kind === 'elicit' && view.action === 'accept' && view.content?.approve === true
      return run(yes ? toArgv(desc, { ...args, confirm: state.token }) : argv)
    }
    if (state?.kind === 'policy')
      return policy.answered(state, ctx.mcpReq.inputResponses, (resume) => run(resume, false))
    if (state?.kind === 'resume') {
      const view = sdk.inputResponse(ctx.mcpReq.inputResponses, 'human')
      const resume = resumeArgv(launcher.prefixes, state.resume)
      if (view.kind === 'elicit' && view.action === 'accept' && resume) return run(resume)
      // Declined or cancelled: the plain answer (a checkpoint and its resume), without asking again.
      return run(argv, false)
    }
    if (approval && desc.type === 'write' && modes.form && args.dry_run === undefined && args.confirm === undefined) {
      const dry = await runLogged(ctx, toArgv(desc, { ...args, dry_run: true }), { signal, ...(env ? { env } : {}) })
      const planned = dryRunOf(dry)
      if (!planned) return toolResult(dry.envelope, mcpHint(dry.envelope, def.name))
      return sdk.inputRequired({
        inputRequests: {
          approve: sdk.inputRequired.elicit({
            message: approvalMessage(def.name, planned.preview),
            requestedSchema: APPROVAL_SCHEMA as never,
          }),
        },
        requestState: await codec.mint({ kind: 'approve', token: planned.token, tool: def.name }),
      })
    }
    return run(argv)
  }
  // Whatever the server itself refuses (an argument no CLI call can express, one too many bytes) is an envelope too.
  return (def: ToolDef, desc: CommandDescription, args: Record<string, unknown>, ctx: Ctx): Promise<unknown> =>
    handle(def, desc, args, ctx).catch((error: unknown) => toolResult(errorEnvelopeOf(toAgentError(error), catalogue)))
}
