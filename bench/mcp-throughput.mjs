#!/usr/bin/env node
// npm run bench:mcp (second part): throughput of `tasks mcp --http` (its defaults: a read runs in the server, one at a time, the rest by warm processes) under bounded
// concurrency: 1, 8 and 32 clients, each its own session (the official client, 2026-07-28), calling `get` in a
// loop, the levels alternated round by round in one run so load on the machine hits them alike. A round is
// BENCH_CALLS calls (default 64) spread evenly over the clients; calls/s is that round's calls over its wall
// time. Prints, per level, the median calls/s and median call latency over BENCH_ROUNDS rounds (default 5), and
// the throughput ratios to one client. Every answer is checked (`ok`). Not a test.
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const callsPerRound = Number(process.env.BENCH_CALLS ?? 64)
const LEVELS = [1, 8, 32]
const { home, env } = benchHome('agentcli-bench-mcp-tp-', { tasks: 1 })
const bin = join(root, 'examples/tasks/bin/run.js')

// The server: a process this bench starts and stops (SIGTERM, by its PID).
const server = spawn(process.execPath, [bin, 'mcp', '--http', '--port', '0'], {
  env,
  stdio: ['ignore', 'ignore', 'pipe'],
})
const url = await new Promise((resolve, reject) => {
  let log = ''
  server.stderr.on('data', (c) => {
    log += c
    const m = /mcp: listening on (\S+)/.exec(log)
    if (m) resolve(m[1])
  })
  server.once('exit', (code) => reject(new Error(`mcp --http exited ${code}: ${log}`)))
})

/** `n` connected clients, each its own session. */
async function clients(n) {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const client = new Client(
        { name: 'bench', version: '1' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      )
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      return client
    }),
  )
}

const pools = new Map()
for (const n of LEVELS) pools.set(n, await clients(n))
const results = new Map(LEVELS.map((n) => [n, { rate: [], latency: [] }]))

/** One round at `n` clients: `callsPerRound` calls, each client its share, sequentially. */
async function round(n) {
  const pool = pools.get(n)
  const share = Math.ceil(callsPerRound / n)
  const latency = []
  const start = process.hrtime.bigint()
  await Promise.all(
    pool.map(async (client) => {
      for (let i = 0; i < share; i++) {
        const t = process.hrtime.bigint()
        const r = await client.callTool({ name: 'get', arguments: { id: '1' } })
        latency.push(Number(process.hrtime.bigint() - t) / 1e6)
        if (r.isError || r.structuredContent?.ok !== true) throw new Error(`get failed: ${JSON.stringify(r)}`)
      }
    }),
  )
  const wall = Number(process.hrtime.bigint() - start) / 1e9
  results.get(n).rate.push((share * n) / wall)
  results.get(n).latency.push(median(latency))
}

try {
  // One warm-up round per level (first sessions, first spawns), not counted.
  for (const n of LEVELS) await round(n)
  for (const n of LEVELS) results.set(n, { rate: [], latency: [] })
  for (let r = 0; r < rounds; r++) for (const n of LEVELS) await round(n)
  console.log(`tasks mcp --http throughput (${rounds} rounds of ${callsPerRound} calls per level, alternated):`)
  console.log('clients'.padEnd(10), 'calls/s'.padStart(10), 'median ms'.padStart(12), 'vs 1 client'.padStart(13))
  const base = median(results.get(1).rate)
  for (const n of LEVELS) {
    const rate = median(results.get(n).rate)
    console.log(
      String(n).padEnd(10),
      rate.toFixed(1).padStart(10),
      median(results.get(n).latency).toFixed(1).padStart(12),
      `${(rate / base).toFixed(2)}x`.padStart(13),
    )
  }
} finally {
  for (const pool of pools.values()) await Promise.all(pool.map((c) => c.close().catch(() => {})))
  server.kill('SIGTERM')
  await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve()))
  rmSync(home, { recursive: true, force: true })
}
