// What the MCP benches share: a copy of the example with its own MCP settings, and an open stdio session of the
// official client with the server's log kept.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * The example with one way of running a call pinned (`mcp`: its `agentcli.mcp` settings): a copy inside the
 * repository (its bin resolves agentcli from there), under `.bench/`. The caller removes it.
 */
export function exampleVariant(name, mcp) {
  mkdirSync(join(root, '.bench'), { recursive: true })
  const dir = mkdtempSync(join(root, '.bench', `mcp-${name}-`))
  cpSync(join(root, 'examples/tasks'), dir, { recursive: true, filter: (p) => !p.includes('node_modules') })
  const pjson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  pjson.agentcli = { ...pjson.agentcli, mcp }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pjson, null, 2))
  return dir
}

/** An open stdio session of node with `args` and `env`; its server's log kept (which calls ran where), and its PID. */
export async function stdioSession(args, env) {
  const transport = new StdioClientTransport({ command: process.execPath, args, env, stderr: 'pipe' })
  let log = ''
  transport.stderr?.on('data', (c) => {
    log += c
  })
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(transport)
  await client.listTools()
  return { client, log: () => log, pid: transport.pid }
}
