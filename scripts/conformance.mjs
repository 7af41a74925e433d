#!/usr/bin/env node
// npm run conformance: the official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against
// the example's `tasks mcp --http` on a free loopback port, with test/conformance/expected-failures.yml (each entry
// with its reason). Exit code: the suite's (a new failure, or an expected one that now passes, fails the run).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SUITE = '@modelcontextprotocol/conformance@0.1.16'
const root = fileURLToPath(new URL('..', import.meta.url))
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
let code = 1
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
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'
  const baseline = join(root, 'test/conformance/expected-failures.yml')
  const suite = spawn(npx, ['--yes', SUITE, 'server', '--url', url, '--expected-failures', baseline], {
    stdio: 'inherit',
    cwd: home,
  })
  code = await new Promise((resolve) => suite.once('exit', (c) => resolve(c ?? 1)))
} finally {
  server.kill('SIGTERM')
  await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve()))
  rmSync(home, { recursive: true, force: true })
}
process.exitCode = code
