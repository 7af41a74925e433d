import { AgentCommand, Flags, output } from '../../index.js'

export default class Mcp extends AgentCommand {
  static override summary = 'Serve this tool over the Model Context Protocol (stdio)'
  static override description =
    'Speaks MCP on stdin/stdout until the client closes stdin: one tool per command (job status → job_status), arguments in snake_case, results carrying the same envelope the CLI prints. Writes keep dry_run → confirm; a client that can show a person an approval form is asked through elicitation. Logs on stderr. Add it to a client as the command `<bin> mcp` (docs/mcp.md).'
  static override examples = ['<%= config.bin %> mcp', '<%= config.bin %> mcp --discovery']
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
  }

  static override output = output((z) => z.object({ messages: z.literal(0), note: z.string() }))

  async execute() {
    const { flags } = await this.parse(Mcp)
    // The SDK loads here and nowhere else: no other command pays for it.
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
