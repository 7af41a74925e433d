import { existsSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { describeCommands } from '../describe/reference.js'
import { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import { invocation, shellQuote } from '../runtime/invocation.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { oclifConfig } from '../runtime/tool-config.js'
import { principalKey } from './_tasks-map.js'
import { type CallPrincipal, type Codec, type Ctx, callHandler } from './call-tool.js'
import { killGraceOf } from './children.js'
import { inProcessRunner } from './in-process.js'
import { inProcessReadsOf } from './in-process-setting.js'
import { loggedArgv } from './logging.js'
import { warmPool, warmProcessesOf } from './pool.js'
import { stateSealer } from './request-state.js'
import { errorEnvelopeOf, type ToolResult, toolResult } from './result.js'
import { type Launcher, startWarm } from './run-call.js'
import { type TaskListener, taskListener } from './task-listen.js'
import { toolKeyRing } from './tool-ring.js'
import { type ListedTool, listedTools, maxListBytesOf, type ToolDef, toolDefs } from './tools.js'

/** What builds the tool's MCP servers, for either transport. */
export type FactoryOptions = {
  config: ToolConfig
  catalogue: Catalogue
  /** How each call starts the tool's own bin (default: this node and this process's script). */
  launcher?: Pick<Launcher, 'command'>
  /** List three tools (search_tools / describe_tool / call_tool) instead of one per command. */
  discovery?: boolean
  /** Ask a person to approve a write through elicitation when the client can show it (default true). */
  approval?: boolean
}

/** The SDK's server module. */
export type Sdk = typeof import('@modelcontextprotocol/server')

type Handler = (args: Record<string, unknown>, ctx: Ctx) => Promise<unknown>

/**
 * Everything a server instance is made of, computed once per process: the tools from `reference`, the sealer of
 * input-required state (its keys derived from the tool's confirm key ring, so a stateless HTTP retry can carry on
 * a flow another request, or another server of the tool sharing its ring, began), the launcher. `build` makes one
 * `McpServer` (per stdio connection, or per HTTP request); `principal` is who its calls act for; `canAsk` false when an elicitation's answer could not come
 * back to it (a 2025-era request over stateless HTTP): its writes and checkpoints answer as without elicitation.
 */
export async function mcpFactory(options: FactoryOptions): Promise<{
  sdk: Sdk
  build: (principal?: CallPrincipal, canAsk?: boolean) => InstanceType<Sdk['McpServer']>
  /** The status notifications of tasks, served in front of the SDK (see ./task-listen.ts). */
  listener: TaskListener
}> {
  const sdk = await import('@modelcontextprotocol/server')
  const { config, catalogue } = options
  const descriptions = await describeCommands(await oclifConfig(config))
  const defs = toolDefs(descriptions)
  const byName = new Map(defs.map((d) => [d.name, { def: d, desc: descriptions.find((c) => c.path === d.command)! }]))
  // The state of an input-required round comes back from the client, maybe to another server of this tool: sealed
  // with a key derived from the tool's confirm key ring (the fleet's shared one, else this machine's), for the
  // principal of the call that minted it, expiring with the longest a person may take (./request-state.ts).
  const sealer = stateSealer(
    sdk.createRequestStateCodec,
    () => toolKeyRing(config),
    `${config.bin}\0${String(config.pjson.name)}`,
  )
  const uid = userInfo().uid
  const command = options.launcher?.command ?? [process.execPath, process.argv[1]!]
  const launcher: Launcher = {
    command,
    bin: config.bin,
    // A child started as `command` prints its next steps starting with one of these (invocation(): the bin when
    // PATH finds this script by that name, else node and the script's path).
    prefixes: [
      ...new Set([
        config.bin,
        invocation(config.bin),
        command.map(shellQuote).join(' '),
        ['node', ...command.slice(1)].map(shellQuote).join(' '),
      ]),
    ],
    onSpawn: (pid, argv, warm) => process.stderr.write(`mcp: ${loggedArgv(argv)} (pid ${pid})${warm ? ' warm' : ''}\n`),
    killGraceMs: killGraceOf(config),
  }
  // Tool processes started ahead of calls, so a call skips the start (src/mcp/pool.ts); the author's number of them.
  const warm = warmProcessesOf(config)
  if (warm > 0)
    launcher.pool = warmPool(
      () => startWarm(launcher),
      warm,
      (pid) => process.stderr.write(`mcp: warm process ready (pid ${pid})\n`),
    )
  // Reads run in this very process when it is free (src/mcp/in-process.ts): only when a call starts this process's
  // own tool, which a launcher of another command does not.
  if (inProcessReadsOf(config) && !options.launcher) {
    launcher.inProcess = inProcessRunner(config, command[1])
    launcher.onInProcess = (argv) => process.stderr.write(`mcp: ${loggedArgv(argv)} (in-process)\n`)
  }
  const skillsDir = join(config.root, 'skills')
  const skills = existsSync(skillsDir) ? await (await import('./skills.js')).loadSkillCatalog(skillsDir) : undefined
  const open: import('@modelcontextprotocol/server').jsonSchemaValidator = {
    // The CLI validates arguments and output itself, so both surfaces refuse with the same code.
    getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
  }
  const commands = new Map(descriptions.map((d) => [d.path.replaceAll(' ', ':'), d.schema_version]))
  const tasks = (await import('./tasks.js')).taskSurface({ sdk, config, catalogue, launcher, commands })
  const { discoveryTools } = options.discovery ? await import('./discovery.js') : { discoveryTools: undefined }
  // Past the listing budget, output schemas leave tools/list and describe_tool returns them (src/mcp/tools.ts).
  const listing = listedTools(defs, maxListBytesOf(config))
  const listed = new Map(listing.tools.map((t) => [t.name, t]))
  const describe = listing.compact && !discoveryTools ? (await import('./discovery.js')).describeTool(defs) : undefined

  // A tool's schemas are wrapped once per process: over HTTP a server instance is built for every request.
  const wrapped = new WeakMap<object, unknown>()
  const schemaOf = (schema: Record<string, unknown>) => {
    if (!wrapped.has(schema)) wrapped.set(schema, sdk.fromJsonSchema(schema as never, open))
    return wrapped.get(schema) as never
  }

  // One server per connection or request, built the same way for either era.
  const build = (principal?: CallPrincipal, canAsk = true) => {
    // Minted for, and verified as, this instance's principal: another subject's state is refused as a forged one.
    const who = principalKey(principal, uid)
    const codec: Codec & { verify(state: string): Promise<unknown> } = {
      mint: (flow) => sealer.mint(flow, who),
      verify: (state) => sealer.verify(state, who),
    }
    const server = new sdk.McpServer(
      { name: config.bin, version: config.version, description: String(config.pjson.description ?? '') },
      {
        instructions: `Tools of ${config.bin}: one per command of \`${config.bin} reference\`.`,
        requestState: { verify: codec.verify },
        // Each call's line and the tool's diagnostics, to a client that asks for them (./logging.ts).
        capabilities: { logging: {} },
      },
    )
    const call = callHandler(
      sdk,
      server,
      codec,
      launcher,
      catalogue,
      options.approval !== false,
      principal,
      canAsk,
      config,
      tasks,
    )
    const register = (def: ListedTool, handler: Handler) =>
      server.registerTool(
        def.name,
        {
          title: def.title,
          description: def.description,
          inputSchema: schemaOf(def.inputSchema),
          ...(def.outputSchema ? { outputSchema: schemaOf(def.outputSchema) } : {}),
          annotations: def.annotations,
          ...(def._meta ? { _meta: def._meta } : {}),
        },
        handler as never,
      )
    if (discoveryTools) {
      for (const tool of discoveryTools(defs, (name, args, ctx) => {
        const entry = byName.get(name)
        if (!entry) return Promise.resolve(unknownTool(name, defs, catalogue))
        return call(entry.def, entry.desc, args, ctx as Ctx)
      }))
        register(tool.def, tool.handler as Handler)
    } else {
      for (const { def, desc } of byName.values())
        register(listed.get(def.name) ?? def, (args, ctx) => call(def, desc, args, ctx))
      if (describe) register(describe.def, describe.handler as Handler)
    }
    skills?.attach(server)
    tasks.attach(server, principal)
    return server
  }
  return { sdk, build, listener: taskListener((taskId, principal) => tasks.read(taskId, principal)) }
}

function unknownTool(name: string, defs: readonly ToolDef[], catalogue: Catalogue): ToolResult {
  const error = new AgentError('E_USAGE', `Unknown tool: ${name}`, {
    details: { got: name, allowed: defs.map((d) => d.name) },
  })
  return toolResult(errorEnvelopeOf(error, catalogue))
}
