#!/usr/bin/env node
// npm run bench:mcp: per-call latency of `get` over an open MCP session (`tasks mcp`, the official client over
// stdio), over Streamable HTTP (`tasks mcp --http`, the official client, 2026-07-28) and a CLI cold start of
// `tasks get 1`, alternated in one run. Prints medians and their ratio. Brief:
// BENCH_ROUNDS (default 20) rounds. `node -e 0` is the floor of a process per call. Not a test.
import { spawn, spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 20)
const node = process.execPath
const { home, env } = benchHome('agentcli-bench-mcp-', { tasks: 1 })
const bin = join(root, 'examples/tasks/bin/run.js')

const sessionStart = process.hrtime.bigint()
const client = new Client({ name: 'bench', version: '1' })
await client.connect(new StdioClientTransport({ command: node, args: [bin, 'mcp'], env, stderr: 'ignore' }))
await client.listTools()
const sessionMs = Number(process.hrtime.bigint() - sessionStart) / 1e6

// The HTTP server: a process this bench starts and stops (SIGTERM, by its PID).
const server = spawn(node, [bin, 'mcp', '--http', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] })
const url = await new Promise((resolve, reject) => {
  let log = ''
  server.stderr.on('data', (c) => {
    log += c
    const m = /mcp: listening on (\S+)/.exec(log)
    if (m) resolve(m[1])
  })
  server.once('exit', (code) => reject(new Error(`mcp --http exited ${code}: ${log}`)))
})
const httpClient = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
await httpClient.connect(new StreamableHTTPClientTransport(new URL(url)))

const cli = []
const mcp = []
const http = []
const floor = []
const once = async () => {
  let start = process.hrtime.bigint()
  spawnSync(node, ['-e', '0'], { env, stdio: 'ignore' })
  floor.push(Number(process.hrtime.bigint() - start) / 1e6)
  start = process.hrtime.bigint()
  const run = spawnSync(node, [bin, 'get', '1'], { env, stdio: ['ignore', 'pipe', 'ignore'] })
  cli.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (run.status !== 0) throw new Error(`tasks get 1 exited ${run.status}`)
  start = process.hrtime.bigint()
  const result = await client.callTool({ name: 'get', arguments: { id: '1' } })
  mcp.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (result.isError) throw new Error(`get over MCP failed: ${JSON.stringify(result.structuredContent)}`)
  start = process.hrtime.bigint()
  const overHttp = await httpClient.callTool({ name: 'get', arguments: { id: '1' } })
  http.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (overHttp.isError) throw new Error(`get over HTTP failed: ${JSON.stringify(overHttp.structuredContent)}`)
}
for (let warm = 0; warm < 2; warm++) await once()
cli.length = 0
mcp.length = 0
http.length = 0
floor.length = 0
for (let round = 0; round < rounds; round++) await once()
await client.close()
await httpClient.close()
server.kill('SIGTERM')
await new Promise((resolve) => server.once('exit', resolve))
rmSync(home, { recursive: true, force: true })

const c = median(cli)
const m = median(mcp)
console.log(
  `get: MCP call over an open session vs CLI cold start, ${rounds} alternated rounds, node ${process.version}`,
)
console.log('variant'.padEnd(30), 'median ms'.padStart(10), 'min'.padStart(7))
const row = (name, xs) =>
  console.log(
    name.padEnd(32),
    median(xs).toFixed(1).padStart(10),
    Math.min(...xs)
      .toFixed(1)
      .padStart(7),
  )
row('tasks get 1 (CLI cold start)', cli)
row('get over MCP (open session)', mcp)
row('get over MCP HTTP (2026-07-28)', http)
row('node -e 0 (floor of a process)', floor)
console.log(
  `ratio MCP / CLI: ${(m / c).toFixed(2)}; HTTP / CLI: ${(median(http) / c).toFixed(2)}; session start (spawn, handshake, tools/list): ${sessionMs.toFixed(0)} ms`,
)
