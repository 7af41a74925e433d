#!/usr/bin/env node
// `node bench/policy.mjs` (after `npm run build`): what the policy gate costs an allowed write. The example tool as
// shipped (its package.json policy, plus an operator's policy.json with approvers and rules that allow `edit`)
// against a copy of the same build with no policy at all; both time `tasks edit 1 --status done --confirm <token>`
// (the dry-run untimed), alternated round by round so machine noise hits both alike. Prints medians and the
// ratio (the target: at most 1.05). Temporary homes; the copy lives in a temp dir inside the repository (so its
// `agentcli/boot` resolves) and is removed.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchHome, median } from './_home.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 25)
const node = process.execPath
const shipped = join(root, 'examples/tasks')
const bare = mkdtempSync(join(root, '.bench-policy-'))
for (const part of ['bin', 'dist', 'oclif.manifest.json', 'agentcli.meta.json', 'package.json'])
  cpSync(join(shipped, part), join(bare, part), { recursive: true })
const pjson = JSON.parse(readFileSync(join(bare, 'package.json'), 'utf8'))
delete pjson.agentcli.policy
writeFileSync(join(bare, 'package.json'), JSON.stringify(pjson, null, 2))

const withPolicy = benchHome('agentcli-bench-policy-', { tasks: 10 })
const without = benchHome('agentcli-bench-nopolicy-', { tasks: 10 })
mkdirSync(join(withPolicy.home, 'config', 'tasks'), { recursive: true, mode: 0o700 })
const approvers = ['alice', 'bob', 'carol'].map((id, i) => ({
  id,
  key: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${String.fromCharCode(65 + i).repeat(43)} ${id}`,
}))
const rules = [
  { id: 'no-prod-sync', when: { command: ['sync'], profile: ['prod'] }, decision: 'deny' },
  { id: 'two-for-wipes', when: { blast_radius: ['all'], reversible: false }, decision: 'approve', approvals: 2 },
  { id: 'edits', when: { command: ['edit'] }, decision: 'allow' },
]
writeFileSync(join(withPolicy.home, 'config', 'tasks', 'policy.json'), JSON.stringify({ approvers, rules }), {
  mode: 0o600,
})

function run(tool, h, args, name) {
  const start = process.hrtime.bigint()
  const r = spawnSync(node, [join(tool, 'bin/run.js'), ...args], { env: h.env, stdio: ['ignore', 'pipe', 'pipe'] })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stdout}${r.stderr}`)
  return { ms, stdout: String(r.stdout) }
}

function confirm(tool, h) {
  const { stdout } = run(tool, h, ['edit', '1', '--status', 'done', '--dry-run'], 'dry-run')
  const data = JSON.parse(stdout).data
  if (data.approval) throw new Error('the benchmarked write must be allowed, not held')
  return run(tool, h, ['edit', '1', '--status', 'done', '--confirm', data.confirm_token], 'confirm').ms
}

try {
  for (let i = 0; i < 2; i++) {
    confirm(shipped, withPolicy)
    confirm(bare, without)
  }
  const gated = []
  const plain = []
  for (let round = 0; round < rounds; round++) {
    if (round % 2) {
      plain.push(confirm(bare, without))
      gated.push(confirm(shipped, withPolicy))
    } else {
      gated.push(confirm(shipped, withPolicy))
      plain.push(confirm(bare, without))
    }
  }
  const g = median(gated)
  const p = median(plain)
  console.log(`an allowed write with and without a policy, ${rounds} alternated rounds, node ${process.version}`)
  console.log('variant'.padEnd(30), 'median ms'.padStart(10), 'min'.padStart(7))
  for (const [name, xs] of [
    ['edit --confirm, no policy', plain],
    ['edit --confirm, policy', gated],
  ])
    console.log(
      name.padEnd(30),
      median(xs).toFixed(1).padStart(10),
      Math.min(...xs)
        .toFixed(1)
        .padStart(7),
    )
  console.log(`ratio policy / no policy: ${(g / p).toFixed(3)} (target ≤ 1.05)`)
  // The gate's own work in-process (read and parse both sources, digest, judge), against the write it gates.
  const { loadPolicy } = await import('../dist/policy/load.js')
  const { evaluate } = await import('../dist/policy/evaluate.js')
  const cfg = join(withPolicy.home, 'config', 'tasks')
  const shippedJson = JSON.parse(readFileSync(join(shipped, 'package.json'), 'utf8'))
  const risk = { action: 'update', blast_radius: 'one', reversible: true, undo: null, cost: null }
  const facts = { command: 'edit', kind: 'write', risk, targets: 1, size: undefined, profile: 'default', account: null }
  const n = 2000
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) evaluate(loadPolicy(cfg, shippedJson, 'tasks'), facts)
  const each = Number(process.hrtime.bigint() - start) / 1e6 / n
  console.log(
    `the gate in-process: ${(each * 1000).toFixed(0)} µs a call, ${((each / p) * 100).toFixed(2)}% of the write`,
  )
} finally {
  rmSync(bare, { recursive: true, force: true })
  rmSync(withPolicy.home, { recursive: true, force: true })
  rmSync(without.home, { recursive: true, force: true })
}
