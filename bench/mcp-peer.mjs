#!/usr/bin/env node
// The in-process baseline of bench/mcp.mjs: the official SDK's server on stdio with one tool, `get`, whose handler
// returns a constant envelope at once (no process, no file read). What a call over an open session costs when the
// tool runs inside the server, as the closest TypeScript peer does. Not a tool; started by the bench only.
import { McpServer } from '@modelcontextprotocol/server'
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio'

const envelope = { ok: true, schema_version: '1.0', data: { id: '1', title: 'task 1', status: 'open' }, meta: {} }
const build = () => {
  const server = new McpServer({ name: 'peer', version: '1.0.0' })
  server.registerTool('get', { description: 'a constant' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: envelope,
  }))
  return server
}
serveStdio(build, { transport: new StdioServerTransport(process.stdin, process.stdout) })
