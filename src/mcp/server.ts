import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describeCommands } from '../describe/reference.js'
import { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import { writeStdout } from '../output/stdout.js'
import { invocation, shellQuote } from '../runtime/invocation.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { oclifConfig } from '../runtime/tool-config.js'
import { type Ctx, callHandler, type FlowState } from './call-tool.js'
import { stopAll } from './children.js'
import { framedInput, maxMessageBytesOf } from './framing.js'
import { errorEnvelopeOf, type ToolResult, toolResult } from './result.js'
import type { Launcher } from './run-call.js'
import { type ToolDef, toolDefs } from './tools.js'

/** Options of {@link serveMcp}. */
export type ServeOptions = {
  config: ToolConfig
  catalogue: Catalogue
  /** How each call starts the tool's own bin (default: this node and this process's script). */
  launcher?: Pick<Launcher, 'command'>
  /** List three tools (search_tools / describe_tool / call_tool) instead of one per command. */
  discovery?: boolean
  /** Ask a person to approve a write through elicitation when the client can show it (default true). */
  approval?: boolean
  /** Aborted (SIGINT/SIGTERM of the server): stop serving. */
  signal?: AbortSignal
}

type Handler = (args: Record<string, unknown>, ctx: Ctx) => Promise<unknown>

/**
 * Serve the tool over MCP on stdin/stdout until the client goes away. Every command of `reference` is a tool;
 * a call runs the tool's own bin with the argv the arguments map to (see {@link toArgv}), so a result's
 * `structuredContent` is the envelope the CLI prints for that call, with its codes, write gate and ledger.
 */
export async function serveMcp(options: ServeOptions): Promise<{ messages: number }> {
  // A bad limit in package.json is E_CONFIG before anything is read.
  const maxBytes = maxMessageBytesOf(options.config)
  const sdk = await import('@modelcontextprotocol/server')
  const { StdioServerTransport, serveStdio } = await import('@modelcontextprotocol/server/stdio')
  const { config, catalogue } = options
  const descriptions = await describeCommands(await oclifConfig(config))
  const defs = toolDefs(descriptions)
  const byName = new Map(defs.map((d) => [d.name, { def: d, desc: descriptions.find((c) => c.path === d.command)! }]))
  // The state of an input-required round comes back from the client: sealed with a key only this process holds
  // (one stdio process serves every round of a flow), expiring with the longest a person may take.
  const codec = sdk.createRequestStateCodec<FlowState>({ key: randomBytes(32), ttlSeconds: 3600 })
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
    onSpawn: (pid, argv) => process.stderr.write(`mcp: ${argv.join(' ')} (pid ${pid})\n`),
  }
  const skillsDir = join(config.root, 'skills')
  const skills = existsSync(skillsDir) ? await (await import('./skills.js')).loadSkillCatalog(skillsDir) : undefined
  const open: import('@modelcontextprotocol/server').jsonSchemaValidator = {
    // The CLI validates arguments and output itself, so both surfaces refuse with the same code.
    getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
  }
  const { discoveryTools } = options.discovery ? await import('./discovery.js') : { discoveryTools: undefined }

  // One server per connection, built the same way for either era: serveStdio picks the era from the opening
  // exchange (2026-07-28 through server/discover, else the 2025-11-25 initialize handshake).
  const build = () => {
    const server = new sdk.McpServer(
      { name: config.bin, version: config.version, description: String(config.pjson.description ?? '') },
      {
        instructions: `Tools of ${config.bin}: one per command of \`${config.bin} reference\`.`,
        requestState: { verify: codec.verify },
      },
    )
    const call = callHandler(sdk, server, codec, launcher, catalogue, options.approval !== false)
    const register = (
      def: Pick<ToolDef, 'name' | 'title' | 'description' | 'inputSchema' | 'annotations'> & {
        outputSchema?: Record<string, unknown>
      },
      handler: Handler,
    ) =>
      server.registerTool(
        def.name,
        {
          title: def.title,
          description: def.description,
          inputSchema: sdk.fromJsonSchema(def.inputSchema as never, open),
          ...(def.outputSchema ? { outputSchema: sdk.fromJsonSchema(def.outputSchema as never, open) } : {}),
          annotations: def.annotations,
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
      for (const { def, desc } of byName.values()) register(def, (args, ctx) => call(def, desc, args, ctx))
    }
    skills?.attach(server)
    return server
  }
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      void writeStdout(chunk).then(() => done())
    },
  })
  let messages = 0
  const spoke = () => {
    messages++
  }
  process.stdin.once('data', spoke)
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve)
    process.stdin.once('close', resolve)
    options.signal?.addEventListener('abort', () => resolve(), { once: true })
  })
  const input = framedInput(process.stdin, {
    maxBytes,
    isMessage: (value) => isMessage(sdk, value),
    answer: (error) => {
      process.stderr.write(`mcp: refused a message: ${error.error.message}\n`)
      stdout.write(`${JSON.stringify(error)}\n`)
    },
  })
  const handle = serveStdio(build, {
    // Lines reach the SDK whole and bounded (framedInput), so its own buffer limit, which closes the session, is off.
    transport: new StdioServerTransport(input, stdout, { maxBufferSize: Number.POSITIVE_INFINITY }),
    onerror: (error) => process.stderr.write(`mcp: ${error.message}\n`),
  })
  await closed
  process.stdin.off('data', spoke)
  // Every call still running is stopped (SIGTERM to its group, SIGKILL after the grace) before the server exits.
  const running = stopAll('SIGTERM')
  if (running.count > 0) process.stderr.write(`mcp: stopping ${running.count} running call(s)\n`)
  await running.done
  await handle.close()
  return { messages }
}

function isMessage(sdk: typeof import('@modelcontextprotocol/server'), value: unknown): boolean {
  try {
    sdk.parseJSONRPCMessage(value)
    return true
  } catch {
    return false
  }
}

function unknownTool(name: string, defs: readonly ToolDef[], catalogue: Catalogue): ToolResult {
  const error = new AgentError('E_USAGE', `Unknown tool: ${name}`, {
    details: { got: name, allowed: defs.map((d) => d.name) },
  })
  return toolResult(errorEnvelopeOf(error, catalogue))
}
