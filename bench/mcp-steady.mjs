#!/usr/bin/env node
// A steady loop of `get` over an open stdio session: the example run in the server's own process
// (agentcli.mcp.in_process_reads true) and the SDK peer (bench/mcp-peer.mjs), alternated call by call, CALLS (default
// 400) calls each, the first fifth dropped; prints the medians, their ratio and the mins. Unlike bench/mcp.mjs
// nothing runs between two calls, so both sides stay hot: what an agent's burst of reads sees. SERVER_PROF=dir
// starts the server with --cpu-prof into dir. On Linux it also prints each server's CPU time (user + system, all its
// threads) per call over the loop. Not a test.
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, median } from './_home.mjs'
import { exampleVariant, stdioSession } from './_mcp.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const calls = Number(process.env.CALLS ?? 400)
const { home, env } = benchHome('agentcli-bench-steady-', { tasks: 1 })
const dir = exampleVariant('steady', { in_process_reads: true })
const prof = process.env.SERVER_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SERVER_PROF}`] : []
const ours = await stdioSession([...prof, join(dir, 'bin/run.js'), 'mcp'], env)
const peer = await stdioSession([join(root, 'bench/mcp-peer.mjs')], env)
const times = { ours: [], peer: [] }
// A process's CPU time in ms (utime + stime from /proc, in clock ticks of 10 ms), or NaN off Linux.
const cpuMs = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}
const cpuBefore = [cpuMs(ours.pid), cpuMs(peer.pid)]
const call = async (s, into) => {
  const start = process.hrtime.bigint()
  const result = await s.client.callTool({ name: 'get', arguments: { id: '1' } })
  into.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (result.isError) throw new Error(`get failed: ${JSON.stringify(result.structuredContent)}`)
}
for (let i = 0; i < calls; i++) {
  await call(ours, times.ours)
  await call(peer, times.peer)
}
const [oursCpu, peerCpu] = [cpuMs(ours.pid) - cpuBefore[0], cpuMs(peer.pid) - cpuBefore[1]]
const served = (ours.log().match(/^mcp: get 1 \(in-process\)$/gm) ?? []).length
await ours.client.close()
await peer.client.close()
rmSync(home, { recursive: true, force: true })
rmSync(dir, { recursive: true, force: true })
const drop = Math.floor(calls / 5)
const o = times.ours.slice(drop)
const p = times.peer.slice(drop)
console.log(
  `steady get: in the server ${median(o).toFixed(3)} ms (min ${Math.min(...o).toFixed(3)}), peer ${median(p).toFixed(3)} ms (min ${Math.min(...p).toFixed(3)}), ratio ${(median(o) / median(p)).toFixed(2)}; ${served} of ${calls} in the server; CPU per call ${((oursCpu / calls) * 1000).toFixed(0)} µs, peer ${((peerCpu / calls) * 1000).toFixed(0)} µs`,
)
