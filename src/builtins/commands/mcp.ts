import { AgentCommand, Flags, output } from '../../index.js'

/** The built-in `mcp`: Serve this tool over the Model Context Protocol (stdio, or Streamable HTTP with --http). */
export default class Mcp extends AgentCommand {
  static override summary = 'Serve this tool over the Model Context Protocol (stdio, or Streamable HTTP with --http)'
  static override description =
    'Speaks MCP on stdin/stdout until the client closes stdin, or with --http on http://127.0.0.1:<port>/mcp until SIGTERM: one tool per command (job status → job_status), arguments in snake_case, results carrying the same envelope the CLI prints. Writes keep dry_run → confirm; a client that can show a person an approval form is asked through elicitation. An endpoint reachable off this machine (a --host off loopback, a --public-url or --allowed-host naming another host) needs bearer authentication (--auth-issuer or --auth-tokens), else E_CONFIG at start; without it, a request forwarded by a proxy (Forwarded, X-Forwarded-*, X-Real-IP) is answered 403. The authenticated subject is the principal of every call it makes. Logs on stderr. Add it to a client as the command `<bin> mcp` or the URL the log names (docs/mcp.md).'
  static override examples = [
    '<%= config.bin %> mcp',
    '<%= config.bin %> mcp --discovery',
    '<%= config.bin %> mcp --http --port 8765',
  ]
  static override flags = {
    discovery: Flags.boolean({
      description:
        'List three tools (search_tools, describe_tool, call_tool) instead of one per command: for large tools.',
    }),
    approval: Flags.boolean({
      default: true,
      allowNo: true,
      description:
        'Ask a person to approve a write through elicitation when the client can show it (--no-approval: never; writes then need dry_run → confirm).',
    }),
    http: Flags.boolean({
      description: 'Serve Streamable HTTP (revisions 2026-07-28 and 2025-11-25) at /mcp instead of stdio.',
    }),
    host: Flags.string({
      description: 'The interface --http listens on; off loopback, authentication is required.',
      default: '127.0.0.1',
    }),
    port: Flags.integer({
      description: 'The port --http listens on (0: any free port; the log line names it).',
      default: 8765,
      min: 0,
      max: 65535,
    }),
    'allowed-host': Flags.string({
      description:
        'A host name requests may name in Host and Origin besides the listener (the public name behind a reverse proxy). Repeatable; a host off loopback needs --auth-issuer or --auth-tokens.',
      multiple: true,
      dependsOn: ['http'],
    }),
    'public-url': Flags.string({
      description:
        'The endpoint URL clients use when a reverse proxy serves it (the RFC 9728 resource); off loopback it needs --auth-issuer or --auth-tokens, and --auth-issuer on a wildcard --host (0.0.0.0, ::) needs it.',
      dependsOn: ['http'],
    }),
    'auth-issuer': Flags.string({
      description:
        "Require bearer JWTs signed by this OAuth issuer (its keys from its RFC 8414 metadata's jwks_uri), for this server's URL as audience.",
      exclusive: ['auth-tokens'],
    }),
    'auth-audience': Flags.string({
      description: 'The audience (aud) tokens must name; default: the endpoint URL (--public-url, else the listener).',
      dependsOn: ['auth-issuer'],
    }),
    'auth-tokens': Flags.string({
      description:
        'Require bearer tokens listed in this file, one "sha256:<hex of the token\'s SHA-256> <subject>" a line (not writable by others).',
      exclusive: ['auth-issuer'],
    }),
    'max-concurrent': Flags.integer({
      description: 'The most HTTP requests served at once; more are answered 503 with Retry-After.',
      default: 32,
      min: 1,
      max: 1024,
    }),
  }

  static override output = output((z) =>
    z.union([
      z.object({ messages: z.literal(0), note: z.string() }),
      z.object({ url: z.string(), requests: z.number().int() }),
    ]),
  )

  async execute() {
    const { flags } = await this.parse(Mcp)
    // The SDK loads here and nowhere else: no other command pays for it.
    if (flags.http) {
      const { serveMcpHttp } = await import('../../mcp/http.js')
      const { issuerAuth, tokenListAuth } = await import('../../mcp/http-auth.js')
      const issuer = flags['auth-issuer']
      const list = flags['auth-tokens']
      // Read (and refused) before listening: a bad token list or issuer URL is E_CONFIG, not a server that lets
      // nobody in.
      const byList = list ? tokenListAuth(list) : undefined
      const auth = byList
        ? () => byList
        : issuer
          ? (resource: string) => issuerAuth({ issuer, audience: flags['auth-audience'] ?? resource })
          : undefined
      return serveMcpHttp({
        ...(auth ? { auth } : {}),
        // An issuer's tokens name the endpoint's URL unless an audience is given: it must be one clients use.
        audienceFromResource: issuer !== undefined && flags['auth-audience'] === undefined,
        extendInterruptGrace: this.runState?.extendInterruptGrace,
        config: this.config,
        catalogue: this.catalogue,
        discovery: flags.discovery,
        approval: flags.approval,
        signal: this.signal,
        host: flags.host,
        port: flags.port,
        maxConcurrent: flags['max-concurrent'],
        ...(flags['allowed-host'] ? { allowedHosts: flags['allowed-host'] } : {}),
        ...(flags['public-url'] ? { publicUrl: flags['public-url'] } : {}),
        onListening: (url) => this.log(`mcp: listening on ${url}`),
      })
    }
    const { serveMcp } = await import('../../mcp/index.js')
    const { messages } = await serveMcp({
      config: this.config,
      catalogue: this.catalogue,
      discovery: flags.discovery,
      approval: flags.approval,
      signal: this.signal,
    })
    // stdout carried the protocol: nothing more may be printed. Run without a client (stdin closed at once), there
    // was no protocol, and the call answers like any other: one envelope.
    if (messages > 0) return this.raw('')
    return {
      messages: 0 as const,
      note: `stdin closed before any MCP message: start ${this.config.bin} mcp from an MCP client (see docs/mcp.md)`,
    }
  }
}
