#!/usr/bin/env node
// node bench/fleet.mjs: the cost of fleet mode against the machine-local files. A confirm round trip (dry-run +
// confirm of `tasks create`, two processes) and 1,000 single-use ledger inserts in one process, on the file
// ledger, PostgreSQL and Redis (127.0.0.1, as the machine provides them), alternated round-robin; and the
// submit → start latency of each queue engine. Prints medians and ratios. Not a test. Needs `npm run build`.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 7)
const inserts = Number(process.env.BENCH_INSERTS ?? 1000)
const ns = `bench_${randomBytes(4).toString('hex')}`
const user = process.env.BENCH_PG_USER ?? 'root'
const urls = {
  postgres: `postgres://${user}@127.0.0.1:5432/test?schema=${ns}`,
  redis: `redis://127.0.0.1:6379?prefix=${ns}`,
}
const secret = randomBytes(32).toString('hex')
const home = mkdtempSync(join(tmpdir(), 'agentcli-fleet-bench-'))

function tool(args, url) {
  const env = {
    ...benchHome('', { home }).env,
    TASKS_CONFIRM_SECRET: secret,
    ...(url ? { TASKS_STATE_URL: url } : {}),
  }
  const r = spawnSync(process.execPath, [join(root, 'examples/tasks/bin/run.js'), ...args], { env, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stdout}${r.stderr}`)
  return JSON.parse(r.stdout)
}

function roundTrip(url) {
  const started = performance.now()
  const token = tool(['create', '--title', 'bench', '--dry-run'], url).data.confirm_token
  tool(['create', '--title', 'bench', '--confirm', token], url)
  return performance.now() - started
}

const { fileTokenLedger } = await import(join(root, 'dist/confirm/ledger.js'))
const { sharedTokenLedger } = await import(join(root, 'dist/fleet/ledgers.js'))
const { openPostgres } = await import(join(root, 'dist/fleet/postgres.js'))
const { openRedis } = await import(join(root, 'dist/fleet/redis.js'))
const backends = {
  postgres: await openPostgres(urls.postgres, 'tasks', 'pg'),
  redis: await openRedis(urls.redis, 'tasks', 'redis'),
}
const ledgers = {
  file: () => fileTokenLedger(mkdtempSync(join(home, 'ledger-'))),
  postgres: () => sharedTokenLedger(backends.postgres.primitives),
  redis: () => sharedTokenLedger(backends.redis.primitives),
}

async function thousand(kind) {
  const ledger = ledgers[kind]()
  const now = Date.now()
  const started = performance.now()
  for (let i = 0; i < inserts; i++) await ledger.consume(randomBytes(16).toString('base64url'), now + 600_000, now)
  return performance.now() - started
}

/** Submit → the worker's handler runs, through each engine's queue (pg-boss / BullMQ). */
async function queueLatency(kind, n = 10) {
  const backend = backends[kind]
  const stop = new AbortController()
  const seen = new Map()
  const serving = backend.work(async (id) => seen.get(id)?.(), stop.signal)
  await new Promise((r) => setTimeout(r, 1500))
  const samples = []
  for (let i = 0; i < n; i++) {
    const id = `job_${randomBytes(10).toString('hex')}`
    const ran = new Promise((resolve) => seen.set(id, resolve))
    const started = performance.now()
    await backend.jobs.dispatch({ job_id: id })
    await ran
    samples.push(performance.now() - started)
  }
  stop.abort()
  await serving
  return median(samples)
}

const trips = { file: [], postgres: [], redis: [] }
const batch = { file: [], postgres: [], redis: [] }
for (const kind of Object.keys(trips)) roundTrip(urls[kind]) // warm the code cache and the schema
for (let i = 0; i < rounds; i++) {
  for (const kind of Object.keys(trips)) {
    trips[kind].push(roundTrip(urls[kind]))
    batch[kind].push(await thousand(kind))
  }
}
const latency = { postgres: await queueLatency('postgres'), redis: await queueLatency('redis') }

const row = (kind, xs, base) => `| ${kind} | ${median(xs).toFixed(1)} ms | ${(median(xs) / median(base)).toFixed(2)} |`
console.log(
  `confirm round trip (dry-run + confirm, 2 processes), ${rounds} rounds\n| backend | median | × file |\n| --- | --- | --- |`,
)
for (const kind of Object.keys(trips)) console.log(row(kind, trips[kind], trips.file))
console.log(`\n${inserts} single-use ledger inserts, one process\n| backend | median | × file |\n| --- | --- | --- |`)
for (const kind of Object.keys(batch)) console.log(row(kind, batch[kind], batch.file))
console.log(`\nqueue submit → handler start (median of 10)\n| engine | median |\n| --- | --- |`)
console.log(
  `| pg-boss on PostgreSQL | ${latency.postgres.toFixed(1)} ms |\n| BullMQ on Redis | ${latency.redis.toFixed(1)} ms |`,
)

// Clean up: this run's schema and keys, the temporary home.
const pg = (await import('pg')).default
const client = new pg.Client({ connectionString: urls.postgres.split('?')[0] })
await client.connect()
await client.query(`DROP SCHEMA IF EXISTS "${ns}" CASCADE`)
await client.query(`DROP SCHEMA IF EXISTS "${ns}_queue" CASCADE`)
await client.end()
const { Redis } = await import('ioredis')
const redis = new Redis({ host: '127.0.0.1', port: 6379 })
const keys = await redis.keys(`${ns}:*`)
if (keys.length > 0) await redis.del(...keys)
redis.disconnect()
await Promise.all(Object.values(backends).map((b) => b.close()))
rmSync(home, { recursive: true, force: true })
