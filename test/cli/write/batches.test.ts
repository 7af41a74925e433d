import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { CORE_ERRORS } from '../../../src/errors/catalogue.js'
import { env, ROOT, seed, storeBytes, storePath, tasks, useSandbox } from '../../support/helpers.js'
import { approverFor } from '../../support/ssh-keys.js'

const box = useSandbox()
const ids = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1))
const seedMany = (b: Sandbox, n: number) =>
  seed(
    b,
    ids(n).map((id) => ({ id, title: `task ${id}` })),
  )
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** The CPU time (µs) of one `delete <n ids> --dry-run`: CPU, not wall time, so a loaded machine moves it little. */
async function dryRunCpu(b: Sandbox, n: number): Promise<number> {
  const out = join(b.root, `cpu-${n}.txt`)
  const run = await tasks(b, ['delete', ...ids(n), '--dry-run'], {
    env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/fixtures/record-cpu.mjs')}`, RECORD_CPU_TO: out },
    timeoutMs: 120_000,
  })
  expect(run.code, run.stdout.slice(0, 300)).toBe(0)
  expect(env(run).data.preview.changes).toHaveLength(n)
  return Number(readFileSync(out, 'utf8'))
}

describe('a batch costs its size', () => {
  it('5× the ids cost well under 12× the CPU of the batch work (medians of 3, the fixed cost of one id taken off)', async () => {
    seedMany(box(), 10_000)
    const sizes = [1, 2000, 10_000]
    // One run of each size first: it compiles (and caches) what later runs only use, so it is not timed.
    for (const n of sizes) await dryRunCpu(box(), n)
    const runs: Record<number, number[]> = { 1: [], 2000: [], 10000: [] }
    // Interleaved, so a slow spell of the machine falls on every size alike. Three rounds: CPU time, not wall time,
    // moves little under load, and the bound (12) is four times the linear ratio (≈ 3), half the quadratic one (25).
    for (let round = 0; round < 3; round++) for (const n of sizes) runs[n]!.push(await dryRunCpu(box(), n))
    const fixed = median(runs[1]!)
    const small = median(runs[2000]!) - fixed
    const large = median(runs[10_000]!) - fixed
    expect(small).toBeGreaterThan(0)
    // Linear work gives at most 5 (measured ≈ 3: 2,000 ids are ≈ 0.1 s of CPU, far above one run's noise); the
    // quadratic parse, router and delete gave about 25.
    expect(large / small).toBeLessThan(12)
  }, 180_000)
})

describe('a signal stops a batch in progress', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s while a 10,000-id delete waits to apply: E_INTERRUPTED, exit 130, nothing deleted, the token given back',
    async (signal) => {
      seedMany(box(), 10_000)
      const all = ids(10_000)
      // Deleting more than three tasks needs an approval (the example's policy): a listed approver gives it.
      const approver = approverFor(join(box().env.XDG_CONFIG_HOME!, 'tasks'), join(box().env.XDG_DATA_HOME!, 'tasks'))
      const dry = await tasks(box(), ['delete', ...all, '--dry-run'], { timeoutMs: 60_000 })
      expect(dry.code).toBe(0)
      const token = env(dry).data.confirm_token as string
      await approver.approve(env(dry).data.approval.request)
      const before = storeBytes(box())
      // Another process holds the store's lock: the confirm consumes its token (a marker in the ledger), then
      // waits for the lock in apply(). The signal is sent once the marker exists: the batch is past its plan.
      const lock = `${storePath(box())}.lock`
      mkdirSync(lock)
      const ledger = join(box().env.XDG_DATA_HOME!, 'tasks', 'confirm-ledger')
      let sent = false
      const run = await tasks(box(), ['delete', ...all, '--confirm', token], {
        timeoutMs: 60_000,
        onSpawn: (child) => {
          const timer = setInterval(() => {
            // Kept fresh, as a live holder keeps it, so it never reads as stale.
            utimesSync(lock, new Date(), new Date())
            if (sent || !existsSync(ledger) || readdirSync(ledger).length === 0) return
            sent = true
            child.kill(signal)
          }, 5)
          child.on('exit', () => clearInterval(timer))
        },
      })
      rmdirSync(lock)
      expect(sent).toBe(true)
      expect(run.code, run.stdout.slice(0, 300)).toBe(CORE_ERRORS.E_INTERRUPTED.exit)
      expect(run.code).toBe(130)
      expect(env(run).error).toMatchObject({ code: 'E_INTERRUPTED', retryable: true, details: { signal } })
      // Consistent with the answer: nothing deleted, and the token not spent (its marker is gone again).
      expect(storeBytes(box())).toBe(before)
      expect(readdirSync(ledger)).toEqual([])
      const again = await tasks(box(), ['delete', ...all, '--confirm', token], { timeoutMs: 60_000 })
      expect(again.code, again.stdout.slice(0, 300)).toBe(0)
      expect(env(again).data.summary).toEqual({ ok_count: 10_000, error_count: 0 })
      expect(JSON.parse(storeBytes(box())).tasks).toEqual([])
    },
    120_000,
  )
})

describe('a batch has a declared maximum', () => {
  it('10,001 ids is E_VALIDATION naming the bound and the count, in every mode, before anything is read or written', async () => {
    seedMany(box(), 3)
    const before = storeBytes(box())
    const over = ids(10_001)
    for (const mode of [['--dry-run'], [], ['--confirm', 'ct_2.x.y']]) {
      const run = await tasks(box(), ['delete', ...over, ...mode], { timeoutMs: 60_000 })
      expect(run.code, run.stdout.slice(0, 300)).toBe(2)
      expect(env(run).error).toMatchObject({
        code: 'E_VALIDATION',
        details: { allowed: { max_items: 10_000 }, got: 10_001, param: 'ids' },
      })
    }
    expect(storeBytes(box())).toBe(before)
    // No confirm secret was even created: the check comes before the flow reads anything.
    expect(existsSync(join(box().env.XDG_CONFIG_HOME!, 'tasks', 'confirm.secret'))).toBe(false)
  }, 120_000)

  it('10,000 ids, the bound itself, is a batch: previewed, the ids it cannot find rejected one by one', async () => {
    seedMany(box(), 3)
    const run = await tasks(box(), ['delete', ...ids(10_000), '--dry-run'], { timeoutMs: 60_000 })
    expect(run.code, run.stdout.slice(0, 300)).toBe(0)
    expect(env(run).data.preview.changes).toHaveLength(3)
    expect(env(run).data.preview.rejected).toHaveLength(9_997)
  }, 60_000)
})
