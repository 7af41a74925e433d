import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import type { Sandbox } from 'agentcli/testing'
import { tasksServer } from './cold-tasks.js'
import { useSharedServer } from './helpers.js'

/** An open MCP session with a tool's real bin (`<bin> mcp`), driven by the official client SDK over stdio. */
export type Session = {
  client: Client
  /** What the server wrote on stderr so far (its log: one line per call with the child's PID). */
  stderr(): string
  /** The server's PID (the process this session started). */
  pid(): number | null
  close(): Promise<void>
}

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }

type Options = {
  bin?: string
  /** Start the server with this command instead of `node <bin>` (e.g. the bin script run by its path). */
  command?: string
  args?: string[]
  /** Speak the stateless 2026-07-28 revision (pinned) instead of the 2025-11-25 handshake the client defaults to. */
  modern?: boolean
  /** Answer input-required rounds by hand (the test plays the client): no automatic fulfilment. */
  manual?: boolean
  env?: Record<string, string>
  /** Declare elicitation and answer each request with this function (a person at the client). */
  // biome-ignore lint/suspicious/noExplicitAny: the elicitation request params are loosely typed here
  elicit?: (params: any) => Answer | Promise<Answer>
}

/**
 * The SDK's stdio transport, told apart from it only by its class: for a pinned 2026-07-28 session the client then
 * sends its `server/discover` probe on this connection instead of on a disposable sibling `<bin> mcp` it would start
 * (and reap) first, a guard for servers that exit on a request before `initialize`, which a pinned connect (no legacy
 * fallback) does not need. The server sees the same requests, on its one connection; each session starts one server.
 */
class InPlaceProbe extends StdioClientTransport {}

/** Start `<bin> mcp` in the sandbox and connect the official client to it. */
export async function openSession(box: Sandbox, options: Options = {}): Promise<Session> {
  // The example (or its copy without warm processes, in a file that asked for it: cold-tasks.ts) unless told.
  const example = options.command || options.bin ? undefined : tasksServer()
  const transport = new InPlaceProbe({
    command: options.command ?? process.execPath,
    args: [...(options.command ? [] : [options.bin ?? example!.bin]), 'mcp', ...(options.args ?? [])],
    env: { ...box.env, ...example?.env, ...options.env } as Record<string, string>,
    stderr: 'pipe',
  })
  let log = ''
  transport.stderr?.on('data', (c: Buffer) => {
    log += c.toString('utf8')
  })
  const client = new Client(
    { name: 'agentcli-test', version: '1.0.0' },
    {
      ...(options.elicit ? { capabilities: { elicitation: { form: {}, url: {} } } } : {}),
      ...(options.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  )
  if (options.elicit) {
    const answer = options.elicit
    client.setRequestHandler('elicitation/create', async (request) => (await answer(request.params)) as never)
  }
  await client.connect(transport)
  return { client, stderr: () => log, pid: () => transport.pid, close: () => client.close() }
}

/** A sandbox and a session kept for every test of a describe (or a file): see {@link useSharedSession}. */
export type Shared = { box: Sandbox; s: Session }

/**
 * One sandbox and one `<bin> mcp` session for all the tests of the describe (or file) it is called in, for tests
 * that need no fresh server: each leaves nothing a later one reads, or resets it. `setup` prepares the sandbox
 * before the server starts. The session closes before its sandbox is removed.
 */
export function useSharedSession(options: Options & { setup?: (box: Sandbox) => void } = {}): () => Shared {
  return useSharedServer(
    'session',
    async (box) => {
      options.setup?.(box)
      return { s: await openSession(box, options) }
    },
    ({ s }) => s.close(),
  )
}

/** The structured content of a tool result (the envelope), typed loosely for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary envelope members
export function sc(result: unknown): any {
  return (result as { structuredContent?: unknown }).structuredContent
}

/** An envelope without `meta.duration_ms`, the one member two runs of the same call may differ in. */
// biome-ignore lint/suspicious/noExplicitAny: envelopes are compared structurally
export function withoutDuration(envelope: any): any {
  if (!envelope || typeof envelope !== 'object') return envelope
  const { duration_ms: _, ...meta } = envelope.meta ?? {}
  return { ...envelope, meta }
}
