#!/usr/bin/env node
// npm run bench: cold start of the example tool against `node -e 0` and a bare @oclif/core command, alternated
// round-robin in one run so machine noise hits every variant alike. Prints medians and ratios. Not a test.
// Writes nothing inside the repository: the bare baseline is built in a temporary copy, every run's home (its
// data, config and code cache) is a temporary directory. Confirm tokens, streams and scale have their own
// scripts (bench/confirm.mjs, bench/streams.mjs, bench/scale.mjs).
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 30)
const node = process.execPath
const { home, env } = benchHome('agentcli-bench-', { tasks: 10 })

// The baseline: stock @oclif/core 5 with a manifest, built in a copy (agentcli-build writes the manifest) whose
// node_modules is the repository's, so it resolves the same @oclif/core.
const bareDir = mkdtempSync(join(tmpdir(), 'agentcli-bare-'))
cpSync(join(root, 'bench/bare'), bareDir, { recursive: true })
symlinkSync(join(root, 'node_modules'), join(bareDir, 'node_modules'), 'dir')
const bareBuild = spawnSync(node, [join(root, 'bin/agentcli-build.js'), bareDir], { encoding: 'utf8' })
if (bareBuild.status !== 0) throw new Error(`building the bare baseline failed: ${bareBuild.stderr}`)

// The floor of any oclif tool: @oclif/core alone, bundled and loaded the way agentcli/boot loads a tool's bundle
// (with its post-run code cache). Nothing runs; this is what evaluating oclif costs, stock and with the source
// patches and lazy built-ins agentcli-build applies (src/build/source-patches.ts).
const floor = mkdtempSync(join(tmpdir(), 'agentcli-floor-'))
const { build } = await import('esbuild')
const { lazyBuiltins, sourcePatches } = await import('../dist/build/bundle-plugins.js')
for (const [name, plugins] of [
  ['bundle.cjs', []],
  ['patched.cjs', [lazyBuiltins(), sourcePatches()]],
])
  await build({
    stdin: { contents: "require('@oclif/core')", resolveDir: root },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: join(floor, name),
    external: ['typescript', 'ts-node', 'tsx'],
    plugins,
    logLevel: 'silent',
  })
writeFileSync(
  join(floor, 'run.mjs'),
  `import { loadBundle } from ${JSON.stringify(join(root, 'dist/boot/load-bundle.js'))}\nloadBundle(process.argv[2])\n`,
)

const tasksBin = join(root, 'examples/tasks/bin/run.js')
const variants = [
  ['node -e 0', ['-e', '0']],
  ['bare oclif list', [join(bareDir, 'bin/run.js'), 'list']],
  ['oclif alone, bundled', [join(floor, 'run.mjs'), join(floor, 'bundle.cjs')]],
  ['oclif alone, patched', [join(floor, 'run.mjs'), join(floor, 'patched.cjs')]],
  ['tasks list', [tasksBin, 'list']],
  ['tasks get 1', [tasksBin, 'get', '1']],
  ['tasks --version', [tasksBin, '--version']],
  ['tasks reference', [tasksBin, 'reference']],
  // Every other command (target <= 1.7x node -e 0): a write's preview, local and read built-ins, and those that
  // load oclif's Config (the compact reference lists every command; doctor runs the tool's doctor hooks).
  ['tasks create --dry-run', [tasksBin, 'create', '--title', 'bench', '--dry-run']],
  ['tasks job list', [tasksBin, 'job', 'list']],
  ['tasks context', [tasksBin, 'context']],
  ['tasks changelog', [tasksBin, 'changelog']],
  ['tasks doctor', [tasksBin, 'doctor']],
  ['tasks reference --compact', [tasksBin, 'reference', '--compact']],
  ['tasks list --help', [tasksBin, 'list', '--help']],
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
try {
  // Two warm-up rounds: the first run of each command writes (or extends) the code cache.
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
} finally {
  for (const dir of [home, floor, bareDir]) rmSync(dir, { recursive: true, force: true })
}

const base = median(times.get('node -e 0'))
const bare = median(times.get('bare oclif list'))
console.log(`startup, ${rounds} alternated rounds, node ${process.version}`)
console.log(
  'variant'.padEnd(28),
  'median ms'.padStart(10),
  'min'.padStart(7),
  'x node -e 0'.padStart(12),
  'x bare oclif'.padStart(13),
)
for (const [name] of variants) {
  const m = median(times.get(name))
  const min = Math.min(...times.get(name))
  console.log(
    name.padEnd(28),
    m.toFixed(1).padStart(10),
    min.toFixed(1).padStart(7),
    (m / base).toFixed(2).padStart(12),
    (m / bare).toFixed(2).padStart(13),
  )
}
