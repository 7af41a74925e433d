#!/usr/bin/env node
// npm run conformance: the official MCP conformance suite (@modelcontextprotocol/conformance, server mode, the
// pinned devDependency: never downloaded here) against the example's `tasks mcp --http` on a free loopback port,
// for both revisions' requirement sets (tasks extension included), judged against the baseline in
// src/verify/conformance.ts (each expected failure with its reason). Needs `npm run build`. Exit 1 on an
// unexpected failure or a stale baseline entry. The same run is test/cli/mcp/conformance.test.ts in CI.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  CONFORMANCE_BASELINE,
  CONFORMANCE_REVISIONS,
  judge,
  resolveConformanceSuite,
  runConformance,
} from '../dist/verify/conformance.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const suite = resolveConformanceSuite(root)
if (!suite) throw new Error('@modelcontextprotocol/conformance is not installed: npm ci')
const home = mkdtempSync(join(tmpdir(), 'agentcli-conformance-'))
const env = {
  PATH: process.env.PATH ?? '',
  HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_DATA_HOME: join(home, 'data'),
  XDG_CACHE_HOME: join(home, 'cache'),
  XDG_STATE_HOME: join(home, 'state'),
}
const server = spawn(process.execPath, [join(root, 'examples/tasks/bin/run.js'), 'mcp', '--http', '--port', '0'], {
  env,
  stdio: ['ignore', 'ignore', 'pipe'],
})
let bad = 0
try {
  const url = await new Promise((resolve, reject) => {
    let log = ''
    server.stderr.on('data', (c) => {
      log += c
      const m = /mcp: listening on (\S+)/.exec(log)
      if (m) resolve(m[1])
    })
    server.once('exit', (c) => reject(new Error(`tasks mcp --http exited ${c}: ${log}`)))
  })
  for (const revision of CONFORMANCE_REVISIONS) {
    const started = Date.now()
    const { results } = await runConformance(suite.bin, url, revision)
    const j = judge(revision, results, CONFORMANCE_BASELINE[revision])
    console.log(
      `${revision}: ${j.passed.length} pass, ${j.expected.length} expected failures, ${j.unexpected.length} unexpected, ${j.stale.length} stale (${Date.now() - started} ms)`,
    )
    for (const u of j.unexpected) console.log(`  ✗ ${u.scenario}: ${u.detail}`)
    for (const s of j.stale) console.log(`  stale baseline entry (passes or no longer run): ${s}`)
    bad += j.unexpected.length + j.stale.length
  }
} finally {
  server.kill('SIGTERM')
  await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve()))
  rmSync(home, { recursive: true, force: true })
}
process.exitCode = bad > 0 ? 1 : 0
