#!/usr/bin/env node
// `npx node bench/streams.mjs` (after `npm run build`): an agentcli NDJSON stream against a plain
// `JSON.stringify` + `process.stdout.write` loop (bench/plain-stream.mjs), N items to /dev/null, to a pipe and to a
// file, alternated round by round so machine noise hits both alike. The stream is the fixture tool's
// `count --n N`. Prints items/s, the ratio, and peak RSS (bench/rss.mjs) for each sink. Writes only to a temp dir.
import { spawn } from 'node:child_process'
import { closeSync, openSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const n = Number(process.env.BENCH_STREAM_ITEMS ?? 1_000_000)
const rounds = Number(process.env.BENCH_STREAM_ROUNDS ?? 5)
const sinks = (process.env.BENCH_STREAM_SINKS ?? 'devnull,pipe,file').split(',')
const node = process.execPath
const { home, env } = benchHome('agentcli-bench-streams-')
const rss = join(root, 'bench/rss.mjs')
const variants = {
  plain: [rss, join(root, 'bench/plain-stream.mjs'), String(n)],
  agentcli: [rss, join(root, 'test/fixtures/cli/bin/run.js'), 'count', '--n', String(n)],
}

/** One run: wall time and peak RSS; a pipe's reader checks that the summary line arrived. */
function once(args, sink) {
  return new Promise((resolve, reject) => {
    const out = join(home, 'out.ndjson')
    const fd = sink === 'pipe' ? 'pipe' : openSync(sink === 'file' ? out : '/dev/null', 'w')
    const start = process.hrtime.bigint()
    const child = spawn(node, ['--import', ...args], { env, stdio: ['ignore', fd, 'pipe'] })
    let stderr = ''
    let tail = ''
    child.stderr.on('data', (d) => {
      stderr += d
    })
    // The reader of a pipe keeps only the end, as cheap as a reader can be.
    child.stdout?.on('data', (d) => {
      tail = (tail + d.toString('latin1', Math.max(0, d.length - 200))).slice(-200)
    })
    child.on('close', (status) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      if (typeof fd === 'number') closeSync(fd)
      if (status !== 0) return reject(new Error(`${args.join(' ')} exited ${status}: ${stderr}`))
      if (sink === 'file' && statSync(out).size === 0) return reject(new Error('nothing written'))
      if (sink === 'pipe' && !tail.includes(`"count":${n}`)) return reject(new Error(`no summary line: ${tail}`))
      resolve({ ms, rssMb: Number(/max_rss_kb=(\d+)/.exec(stderr)[1]) / 1024 })
    })
  })
}

try {
  // Warm-up: file caches and the fixture's first-run work are out of the timings.
  await once([rss, join(root, 'test/fixtures/cli/bin/run.js'), 'count', '--n', '10'], 'devnull')
  const results = Object.fromEntries(sinks.map((s) => [s, { plain: [], agentcli: [] }]))
  for (let round = 0; round < rounds; round++) {
    for (const sink of sinks) {
      // Alternate which goes first within the round.
      const order = round % 2 ? ['agentcli', 'plain'] : ['plain', 'agentcli']
      for (const v of order) results[sink][v].push(await once(variants[v], sink))
    }
  }
  console.log(`streams, ${n.toLocaleString('en')} items, ${rounds} alternated rounds, node ${process.version}`)
  console.log(
    'sink'.padEnd(9),
    'plain items/s'.padStart(14),
    'agentcli items/s'.padStart(17),
    'ratio'.padStart(6),
    'plain RSS'.padStart(10),
    'agentcli RSS'.padStart(13),
    'RSS ratio'.padStart(10),
  )
  for (const sink of sinks) {
    const { plain, agentcli } = results[sink]
    const rate = (xs) => n / (median(xs.map((x) => x.ms)) / 1000)
    const mem = (xs) => median(xs.map((x) => x.rssMb))
    console.log(
      sink.padEnd(9),
      Math.round(rate(plain)).toLocaleString('en').padStart(14),
      Math.round(rate(agentcli)).toLocaleString('en').padStart(17),
      (rate(agentcli) / rate(plain)).toFixed(2).padStart(6),
      `${mem(plain).toFixed(0)} MB`.padStart(10),
      `${mem(agentcli).toFixed(0)} MB`.padStart(13),
      (mem(agentcli) / mem(plain)).toFixed(2).padStart(10),
    )
  }
} finally {
  rmSync(home, { recursive: true, force: true })
}
