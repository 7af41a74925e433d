import { McpServer, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server'
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio'
const s = new McpServer({ name: 'x', version: '1' }, { supportedProtocolVersions: ['2026-07-28', ...SUPPORTED_PROTOCOL_VERSIONS] })
if (process.argv[2]) s.registerTool('t', { description: 'd' }, async () => ({ content: [] }))
await s.connect(new StdioServerTransport())
