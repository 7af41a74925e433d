#!/usr/bin/env node
// npm run bench:mcp: per-call latency of `get` over an open MCP session (`tasks mcp`, the official client over
// stdio) run in the server's own process (agentcli.mcp.in_process_reads true), by a warm process (in_process_reads
// false, warm_processes 2) and by a cold start (a copy with warm_processes 0 and in_process_reads false), over Streamable HTTP (`tasks mcp --http` with its defaults: in the server, 2026-07-28), a CLI
// cold start of `tasks get 1`, the closest TypeScript peer itself (bench/mcp-peer-incur.mjs: an incur CLI's `get`
// served by `--mcp`, reading the same store file) and the SDK floor (bench/mcp-peer.mjs: the SDK's own server whose
// tool returns a constant), alternated in one run. Prints medians and their ratios to both. Each incur answer is
// checked to be the task ours answers, each incur call to have reached its handler (its log line), and at the end a
// changed store to reach both answers (nothing cached). Brief: BENCH_ROUNDS (default
// 20) rounds. `node -e 0` is the floor of a process per call. Each warm call is checked to have been served by a
// warm process (the server's log says so); the rounds between two warm calls give the pool time to refill, as an
// agent's thinking does. Not a test.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
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
const incurSession = await stdioSession([join(root, 'bench/mcp-peer-incur.mjs'), '--mcp'])

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
const incur = []
const http = []
const floor = []
const call = async (session, into) => {
  const start = process.hrtime.bigint()
  const result = await session.client.callTool({ name: 'get', arguments: { id: '1' } })
  into.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (result.isError) throw new Error(`get over MCP failed: ${JSON.stringify(result.structuredContent)}`)
  return result.structuredContent
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
  const ours = await call(inSession, inproc)
  await call(coldSession, cold)
  await call(peerSession, peer)
  // incur answers the task itself (its output schema's object); ours wraps it in the envelope's `data`.
  const theirs = await call(incurSession, incur)
  if (!isDeepStrictEqual(theirs, ours.data)) throw new Error(`incur answered ${JSON.stringify(theirs)}`)
  start = process.hrtime.bigint()
  const overHttp = await httpClient.callTool({ name: 'get', arguments: { id: '1' } })
  http.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (overHttp.isError) throw new Error(`get over HTTP failed: ${JSON.stringify(overHttp.structuredContent)}`)
}
// The warm processes are ready before the first round (the session's start gave them time), as for a client.
const warmCalls = () => (warmSession.log().match(/\(pid \d+\) warm$/gm) ?? []).length
for (let warm = 0; warm < 2; warm++) await once()
for (const xs of [cli, mcp, inproc, cold, peer, incur, http, floor]) xs.length = 0
const inCalls = () => (inSession.log().match(/^mcp: get 1 \(in-process\)$/gm) ?? []).length
const incurCalls = () => (incurSession.log().match(/^incur: get 1$/gm) ?? []).length
const warmBefore = warmCalls()
const inBefore = inCalls()
const incurBefore = incurCalls()
for (let round = 0; round < rounds; round++) await once()
const servedWarm = warmCalls() - warmBefore
const servedIn = inCalls() - inBefore
const servedIncur = incurCalls() - incurBefore
// Nothing cached: a changed store reaches both answers.
const storePath = join(home, 'data', 'tasks', 'tasks.json')
const store = JSON.parse(readFileSync(storePath, 'utf8'))
store.tasks[0].title = 'changed'
writeFileSync(storePath, JSON.stringify(store))
const changedOurs = (await inSession.client.callTool({ name: 'get', arguments: { id: '1' } })).structuredContent
const changedIncur = (await incurSession.client.callTool({ name: 'get', arguments: { id: '1' } })).structuredContent
if (changedOurs.data.title !== 'changed' || changedIncur.title !== 'changed')
  throw new Error('a get answered a stale task')
for (const s of [warmSession, inSession, coldSession, peerSession, incurSession]) await s.client.close()
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
const n = median(incur)
// The median of the rounds' own ratios (each pair run side by side), less moved by a burst of load than medians.
const pairs = (a, b) => median(a.map((x, j) => x / b[j])).toFixed(2)
console.log(
  `get: MCP call over an open session (in the server, warm process, cold start, incur, SDK floor) vs CLI cold start, ${rounds} alternated rounds, node ${process.version}`,
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
row('incur get over MCP (the peer)', incur)
row('SDK floor (constant, no read)', peer)
row('node -e 0 (floor of a process)', floor)
console.log(
  `warm calls served by a warm process: ${servedWarm} of ${rounds}; in-server calls run in it: ${servedIn} of ${rounds}; incur calls that reached its handler: ${servedIncur} of ${rounds}`,
)
console.log(
  `in the server / incur: ${(i / n).toFixed(2)} (the issue's bar: <= 2; per round ${pairs(inproc, incur)}); / SDK floor: ${(i / p).toFixed(2)} (per round ${pairs(inproc, peer)}); incur / floor: ${(n / p).toFixed(2)}; warm / incur: ${(m / n).toFixed(2)}; warm / floor: ${(m / p).toFixed(2)}; cold / incur: ${(k / n).toFixed(2)}; cold / floor: ${(k / p).toFixed(2)}; warm / cold: ${(m / k).toFixed(2)}; warm / CLI: ${(m / c).toFixed(2)}; HTTP / CLI: ${(median(http) / c).toFixed(2)}; session start (spawn, handshake, tools/list): ${sessionMs.toFixed(0)} ms`,
)
