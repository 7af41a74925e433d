#!/usr/bin/env node
// A steady loop of `get` over an open stdio session: the example run in the server's own process
// (agentcli.mcp.in_process_reads true), the closest TypeScript peer itself (bench/mcp-peer-incur.mjs: an incur CLI's
// `get` over `--mcp`, reading the same store file) and the SDK floor (bench/mcp-peer.mjs, a constant), alternated
// call by call, CALLS (default 400) calls each, the first fifth dropped; prints the medians, the ratios to incur and
// to the floor (of the medians, and the median of each triple's own ratios) and the mins. Every incur answer is
// checked to be the task ours answers, and every incur call to have reached its handler (its log line). Unlike bench/mcp.mjs
// nothing runs between two calls, so both sides stay hot: what an agent's burst of reads sees. SERVER_PROF=dir
// starts the server with --cpu-prof into dir. On Linux it also prints each server's CPU time (user + system, all its
// threads) per call over the loop. Not a test.
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { benchHome, median } from './_home.mjs'
import { exampleVariant, stdioSession } from './_mcp.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const calls = Number(process.env.CALLS ?? 400)
const { home, env } = benchHome('agentcli-bench-steady-', { tasks: 1 })
const dir = exampleVariant('steady', { in_process_reads: true })
const prof = process.env.SERVER_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SERVER_PROF}`] : []
const ours = await stdioSession([...prof, join(dir, 'bin/run.js'), 'mcp'], env)
const peer = await stdioSession([join(root, 'bench/mcp-peer.mjs')], env)
const incur = await stdioSession([join(root, 'bench/mcp-peer-incur.mjs'), '--mcp'], env)
const times = { ours: [], peer: [], incur: [] }
// A process's CPU time in ms (utime + stime from /proc, in clock ticks of 10 ms), or NaN off Linux.
const cpuMs = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}
const cpuBefore = [cpuMs(ours.pid), cpuMs(peer.pid), cpuMs(incur.pid)]
const call = async (s, into) => {
  const start = process.hrtime.bigint()
  const result = await s.client.callTool({ name: 'get', arguments: { id: '1' } })
  into.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (result.isError) throw new Error(`get failed: ${JSON.stringify(result.structuredContent)}`)
  return result.structuredContent
}
for (let i = 0; i < calls; i++) {
  const task = (await call(ours, times.ours)).data
  await call(peer, times.peer)
  const theirs = await call(incur, times.incur)
  if (!isDeepStrictEqual(theirs, task)) throw new Error(`incur answered ${JSON.stringify(theirs)}`)
}
const [oursCpu, peerCpu, incurCpu] = [ours, peer, incur].map((s, j) => cpuMs(s.pid) - cpuBefore[j])
const served = (ours.log().match(/^mcp: get 1 \(in-process\)$/gm) ?? []).length
const servedIncur = (incur.log().match(/^incur: get 1$/gm) ?? []).length
for (const s of [ours, peer, incur]) await s.client.close()
rmSync(home, { recursive: true, force: true })
rmSync(dir, { recursive: true, force: true })
const drop = Math.floor(calls / 5)
const o = times.ours.slice(drop)
const p = times.peer.slice(drop)
const n = times.incur.slice(drop)
const pairs = (a, b) => median(a.map((x, j) => x / b[j])).toFixed(2)
const us = (ms) => `${((ms / calls) * 1000).toFixed(0)} µs`
console.log(
  `steady get: in the server ${median(o).toFixed(3)} ms (min ${Math.min(...o).toFixed(3)}), incur ${median(n).toFixed(3)} ms (min ${Math.min(...n).toFixed(3)}), SDK floor ${median(p).toFixed(3)} ms (min ${Math.min(...p).toFixed(3)})`,
)
console.log(
  `ratio to incur ${(median(o) / median(n)).toFixed(2)} (per call ${pairs(o, n)}), to the floor ${(median(o) / median(p)).toFixed(2)} (per call ${pairs(o, p)}); incur / floor ${(median(n) / median(p)).toFixed(2)}; ${served} of ${calls} in the server, ${servedIncur} of ${calls} in incur's handler; CPU per call ${us(oursCpu)}, incur ${us(incurCpu)}, floor ${us(peerCpu)}`,
)
