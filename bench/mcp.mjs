#!/usr/bin/env node
// npm run bench:mcp: per-call latency of `get` over an open MCP session (`tasks mcp`, the official client over
// stdio) run in the server's own process (agentcli.mcp.in_process_reads true), by a warm process (in_process_reads
// false, warm_processes 2) and by a cold start (a copy with warm_processes 0 and in_process_reads false), over Streamable HTTP (`tasks mcp --http`, warm, 2026-07-28), a CLI
// cold start of `tasks get 1`, and the in-process peer baseline (bench/mcp-peer.mjs: the SDK's own server whose
// tool returns a constant), alternated in one run. Prints medians and their ratios. Brief: BENCH_ROUNDS (default
// 20) rounds. `node -e 0` is the floor of a process per call. Each warm call is checked to have been served by a
// warm process (the server's log says so); the rounds between two warm calls give the pool time to refill, as an
// agent's thinking does. Not a test.
import { spawn, spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { benchHome, median } from './_home.mjs'
import { exampleVariant, stdioSession as openSession } from './_mcp.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 20)
const node = process.execPath
const { home, env } = benchHome('agentcli-bench-mcp-', { tasks: 1 })
const bin = join(root, 'examples/tasks/bin/run.js')

// The example with each way of running a call pinned, each with its own MCP settings.
const coldDir = exampleVariant('cold', { warm_processes: 0, in_process_reads: false })
const warmDir = exampleVariant('warm', { warm_processes: 2, in_process_reads: false })
const inDir = exampleVariant('in', { in_process_reads: true })
const stdioSession = (args) => openSession(args, env)

const sessionStart = process.hrtime.bigint()
const warmSession = await stdioSession([join(warmDir, 'bin/run.js'), 'mcp'])
const sessionMs = Number(process.hrtime.bigint() - sessionStart) / 1e6
const inSession = await stdioSession([join(inDir, 'bin/run.js'), 'mcp'])
const coldSession = await stdioSession([join(coldDir, 'bin/run.js'), 'mcp'])
const peerSession = await stdioSession([join(root, 'bench/mcp-peer.mjs')])

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
const inproc = []
const cold = []
const peer = []
const http = []
const floor = []
const call = async (session, into) => {
  const start = process.hrtime.bigint()
  const result = await session.client.callTool({ name: 'get', arguments: { id: '1' } })
  into.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (result.isError) throw new Error(`get over MCP failed: ${JSON.stringify(result.structuredContent)}`)
}
const once = async () => {
  let start = process.hrtime.bigint()
  spawnSync(node, ['-e', '0'], { env, stdio: 'ignore' })
  floor.push(Number(process.hrtime.bigint() - start) / 1e6)
  start = process.hrtime.bigint()
  const run = spawnSync(node, [bin, 'get', '1'], { env, stdio: ['ignore', 'pipe', 'ignore'] })
  cli.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (run.status !== 0) throw new Error(`tasks get 1 exited ${run.status}`)
  await call(warmSession, mcp)
  await call(inSession, inproc)
  await call(coldSession, cold)
  await call(peerSession, peer)
  start = process.hrtime.bigint()
  const overHttp = await httpClient.callTool({ name: 'get', arguments: { id: '1' } })
  http.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (overHttp.isError) throw new Error(`get over HTTP failed: ${JSON.stringify(overHttp.structuredContent)}`)
}
// The warm processes are ready before the first round (the session's start gave them time), as for a client.
const warmCalls = () => (warmSession.log().match(/\(pid \d+\) warm$/gm) ?? []).length
for (let warm = 0; warm < 2; warm++) await once()
for (const xs of [cli, mcp, inproc, cold, peer, http, floor]) xs.length = 0
const inCalls = () => (inSession.log().match(/^mcp: get 1 \(in-process\)$/gm) ?? []).length
const warmBefore = warmCalls()
const inBefore = inCalls()
for (let round = 0; round < rounds; round++) await once()
const servedWarm = warmCalls() - warmBefore
const servedIn = inCalls() - inBefore
for (const s of [warmSession, inSession, coldSession, peerSession]) await s.client.close()
await httpClient.close()
server.kill('SIGTERM')
await new Promise((resolve) => server.once('exit', resolve))
rmSync(home, { recursive: true, force: true })
for (const dir of [coldDir, warmDir, inDir]) rmSync(dir, { recursive: true, force: true })

const c = median(cli)
const m = median(mcp)
const i = median(inproc)
const k = median(cold)
const p = median(peer)
console.log(
  `get: MCP call over an open session (in the server, warm process, cold start, in-process peer) vs CLI cold start, ${rounds} alternated rounds, node ${process.version}`,
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
row('get over MCP, in the server', inproc)
row('get over MCP, warm process', mcp)
row('get over MCP, cold start', cold)
row('get over MCP HTTP (defaults)', http)
row('in-process peer (SDK, constant)', peer)
row('node -e 0 (floor of a process)', floor)
console.log(
  `warm calls served by a warm process: ${servedWarm} of ${rounds}; in-server calls run in it: ${servedIn} of ${rounds}`,
)
console.log(
  `ratio in the server / in-process peer: ${(i / p).toFixed(2)} (the issue's bar: <= 2); warm / cold: ${(m / k).toFixed(2)}; warm / in-process peer: ${(m / p).toFixed(2)}; cold / peer: ${(k / p).toFixed(2)}; warm / CLI: ${(m / c).toFixed(2)}; HTTP / CLI: ${(median(http) / c).toFixed(2)}; session start (spawn, handshake, tools/list): ${sessionMs.toFixed(0)} ms`,
)
