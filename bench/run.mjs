#!/usr/bin/env node
// npm run bench: cold start of the example tool against `node -e 0` and a bare @oclif/core command, alternated
// round-robin in one run so machine noise hits every variant alike. Prints medians and ratios. Not a test.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 30)
const node = process.execPath
const home = mkdtempSync(join(tmpdir(), 'agentcli-bench-'))
const env = {
  PATH: process.env.PATH,
  HOME: home,
  XDG_DATA_HOME: join(home, 'data'),
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_CACHE_HOME: join(home, 'cache'),
}
mkdirSync(join(home, 'data', 'tasks'), { recursive: true })
const at = '2026-01-02T03:04:05.000Z'
const tasks = Array.from({ length: 10 }, (_, i) => ({
  id: String(i + 1),
  title: `task ${i + 1}`,
  status: 'open',
  created_at: at,
  updated_at: at,
  version: 1,
}))
writeFileSync(join(home, 'data', 'tasks', 'tasks.json'), JSON.stringify({ schema: 1, next_id: 11, tasks }))

spawnSync(node, [join(root, 'bin/agentcli-build.js'), join(root, 'bench/bare')], { stdio: 'ignore' })

// The floor of any oclif tool: @oclif/core alone, bundled and loaded the way agentcli/boot loads a tool's bundle
// (with its post-run code cache). Nothing runs; this is what evaluating oclif costs.
const floor = mkdtempSync(join(tmpdir(), 'agentcli-floor-'))
const { build } = await import('esbuild')
await build({
  stdin: { contents: "require('@oclif/core')", resolveDir: root },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  outfile: join(floor, 'bundle.cjs'),
  external: ['typescript', 'ts-node', 'tsx'],
  logLevel: 'silent',
})
writeFileSync(
  join(floor, 'run.mjs'),
  `import { loadBundle } from ${JSON.stringify(join(root, 'dist/boot/index.js'))}\nloadBundle(process.argv[2])\n`,
)

const tasksBin = join(root, 'examples/tasks/bin/run.js')
const variants = [
  ['node -e 0', ['-e', '0']],
  ['bare oclif list', [join(root, 'bench/bare/bin/run.js'), 'list']],
  ['oclif alone, bundled', [join(floor, 'run.mjs'), join(floor, 'bundle.cjs')]],
  ['tasks list', [tasksBin, 'list']],
  ['tasks get 1', [tasksBin, 'get', '1']],
  ['tasks --version', [tasksBin, '--version']],
  ['tasks reference', [tasksBin, 'reference']],
  // The same command from the tool's modules instead of its bundle: what the bundle and its code cache save.
  ['tasks list (modules)', [tasksBin, 'list'], { AGENTCLI_NO_BUNDLE: '1' }],
  ['tasks list (no cache)', [tasksBin, 'list'], { AGENTCLI_CODE_CACHE: '0' }],
]
const extra = (process.env.BENCH_EXTRA ?? '')
  .split(';')
  .filter(Boolean)
  .map((spec) => [`tasks ${spec}`, [tasksBin, ...spec.split(' ')]])
variants.push(...extra)

const times = new Map(variants.map(([name]) => [name, []]))
for (let warm = 0; warm < 2; warm++)
  for (const [, args, extraEnv] of variants) spawnSync(node, args, { env: { ...env, ...extraEnv }, stdio: 'ignore' })
for (let round = 0; round < rounds; round++) {
  for (const [name, args, extraEnv] of variants) {
    const start = process.hrtime.bigint()
    const result = spawnSync(node, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] })
    const ms = Number(process.hrtime.bigint() - start) / 1e6
    if (result.status !== 0) throw new Error(`${name} exited ${result.status}: ${result.stderr}`)
    times.get(name).push(ms)
  }
}
rmSync(home, { recursive: true, force: true })
rmSync(floor, { recursive: true, force: true })

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const base = median(times.get('node -e 0'))
const bare = median(times.get('bare oclif list'))
console.log(`startup, ${rounds} alternated rounds, node ${process.version}`)
console.log(
  'variant'.padEnd(24),
  'median ms'.padStart(10),
  'min'.padStart(7),
  'x node -e 0'.padStart(12),
  'x bare oclif'.padStart(13),
)
for (const [name] of variants) {
  const m = median(times.get(name))
  const min = Math.min(...times.get(name))
  console.log(
    name.padEnd(24),
    m.toFixed(1).padStart(10),
    min.toFixed(1).padStart(7),
    (m / base).toFixed(2).padStart(12),
    (m / bare).toFixed(2).padStart(13),
  )
}

// Confirm tokens, in process: the cost a write pays for its safety.
const { mintToken, verifyToken } = await import('../dist/confirm/token.js')
const secret = Buffer.alloc(32, 7)
const binding = {
  command: 'edit',
  args: { id: '1', status: 'done' },
  targets: ['1'],
  versions: { 1: 3 },
  principal: { account: 'ann', profile: 'default' },
}
const n = 20_000
const mints = []
let t = process.hrtime.bigint()
for (let i = 0; i < n; i++) mints.push(mintToken(secret, binding, Date.now(), 600_000).token)
const mintUs = Number(process.hrtime.bigint() - t) / 1e3 / n
t = process.hrtime.bigint()
for (const token of mints) if (!verifyToken(secret, token, binding, Date.now()).ok) throw new Error('verify failed')
const verifyUs = Number(process.hrtime.bigint() - t) / 1e3 / n
console.log(`\nconfirm token, ${n} each in process: mint ${mintUs.toFixed(1)} µs, verify ${verifyUs.toFixed(1)} µs`)

// Streams: N items to a file, the framework against a plain JSON.stringify + write loop, alternated.
const { openSync, closeSync, statSync: sizeOf } = await import('node:fs')
const streamRounds = Number(process.env.BENCH_STREAM_ROUNDS ?? 3)
const fixtureBin = join(root, 'test/fixtures/cli/bin/run.js')
const rssHook = join(root, 'bench/rss.mjs')
const streamTmp = mkdtempSync(join(tmpdir(), 'agentcli-stream-'))
function streamOnce(args) {
  const out = join(streamTmp, 'out.ndjson')
  const fd = openSync(out, 'w')
  const start = process.hrtime.bigint()
  const r = spawnSync(node, ['--import', rssHook, ...args], { env, stdio: ['ignore', fd, 'pipe'] })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  closeSync(fd)
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`)
  return { ms, rssMb: Number(/max_rss_kb=(\d+)/.exec(String(r.stderr))[1]) / 1024, bytes: sizeOf(out).size }
}
for (const n of [1_000_000, 2_000_000]) {
  const plain = []
  const ours = []
  for (let r = 0; r < streamRounds; r++) {
    plain.push(streamOnce([join(root, 'bench/plain-stream.mjs'), String(n)]))
    ours.push(streamOnce([fixtureBin, 'count', '--n', String(n)]))
  }
  const med = (xs, k) => median(xs.map((x) => x[k]))
  const plainRate = n / (med(plain, 'ms') / 1000)
  const ourRate = n / (med(ours, 'ms') / 1000)
  console.log(
    `stream ${n} items to a file: agentcli ${Math.round(ourRate).toLocaleString('en')} items/s (peak RSS ${med(ours, 'rssMb').toFixed(0)} MB), ` +
      `plain loop ${Math.round(plainRate).toLocaleString('en')} items/s (peak RSS ${med(plain, 'rssMb').toFixed(0)} MB), ratio ${(ourRate / plainRate).toFixed(2)}`,
  )
}
rmSync(streamTmp, { recursive: true, force: true })
