#!/usr/bin/env node
// `npx node bench/confirm.mjs` (after `npm run build`): what a confirmed write costs against a read. Each round
// previews `tasks edit 1 --status done --dry-run` (untimed, for a fresh token), then times the `--confirm <token>`
// run and a `tasks list`, alternated so machine noise hits both alike. Prints medians and the ratio, then the
// in-process cost of minting and verifying a token. Runs in a temporary HOME; writes nothing in the repository.
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 25)
const node = process.execPath
const tasksBin = join(root, 'examples/tasks/bin/run.js')
const { home, env } = benchHome('agentcli-bench-confirm-', { tasks: 10 })

// Each command keeps its own cache directory, so each runs with the code cache its own first run wrote (the
// bundle's cache is taken after the first run, whichever command that was): neither is timed compiling the
// other's functions. The store and the confirm secret are shared.
const cacheOf = (args) =>
  join(home, 'cache', args.includes('--confirm') ? 'confirm' : args[0] === 'list' ? 'list' : 'other')

function run(args, name) {
  const start = process.hrtime.bigint()
  const r = spawnSync(node, [tasksBin, ...args], {
    env: { ...env, XDG_CACHE_HOME: cacheOf(args) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stdout}${r.stderr}`)
  return { ms, stdout: String(r.stdout) }
}

function token() {
  const { stdout } = run(['edit', '1', '--status', 'done', '--dry-run'], 'dry-run')
  return JSON.parse(stdout).data.confirm_token
}

try {
  // Warm-up: the secret, the ledger directory and the code cache of each command exist before the first timing.
  for (let i = 0; i < 2; i++) {
    run(['edit', '1', '--status', 'done', '--confirm', token()], 'confirm')
    run(['list'], 'list')
  }
  const confirms = []
  const lists = []
  for (let round = 0; round < rounds; round++) {
    const t = token()
    // Alternate which goes first, so neither always runs right after the untimed dry-run.
    if (round % 2) {
      lists.push(run(['list'], 'list').ms)
      confirms.push(run(['edit', '1', '--status', 'done', '--confirm', t], 'confirm').ms)
    } else {
      confirms.push(run(['edit', '1', '--status', 'done', '--confirm', t], 'confirm').ms)
      lists.push(run(['list'], 'list').ms)
    }
  }
  const c = median(confirms)
  const l = median(lists)
  console.log(`confirm vs list, ${rounds} alternated rounds, node ${process.version}`)
  console.log('variant'.padEnd(22), 'median ms'.padStart(10), 'min'.padStart(7), 'x list'.padStart(8))
  for (const [name, xs] of [
    ['tasks list', lists],
    ['tasks edit --confirm', confirms],
  ]) {
    const m = median(xs)
    console.log(
      name.padEnd(22),
      m.toFixed(1).padStart(10),
      Math.min(...xs)
        .toFixed(1)
        .padStart(7),
      (m / l).toFixed(2).padStart(8),
    )
  }
  console.log(`ratio confirm / list: ${(c / l).toFixed(2)}`)
} finally {
  rmSync(home, { recursive: true, force: true })
}

// Confirm tokens, in process: the cost a write pays for its safety.
const { mintToken, verifyToken } = await import('../dist/confirm/token.js')
const secret = Buffer.alloc(32, 7)
const binding = {
  tool: 'tasks\0tasks',
  command: 'edit',
  args: { id: '1', status: 'done' },
  principal: { account: 'ann', profile: 'default' },
}
const targets = [{ id: '1', version: 3 }]
const n = 20_000
const mints = []
let t = process.hrtime.bigint()
for (let i = 0; i < n; i++) mints.push(mintToken(secret, binding, targets, Date.now(), 600_000, null).token)
const mintUs = Number(process.hrtime.bigint() - t) / 1e3 / n
t = process.hrtime.bigint()
for (const token of mints) if (!verifyToken(secret, token, binding, Date.now()).ok) throw new Error('verify failed')
const verifyUs = Number(process.hrtime.bigint() - t) / 1e3 / n
console.log(`\nconfirm token, ${n} each in process: mint ${mintUs.toFixed(1)} µs, verify ${verifyUs.toFixed(1)} µs`)
