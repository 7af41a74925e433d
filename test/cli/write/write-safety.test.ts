import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, seed, shiftedClock, storeBytes, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'

/*
 * The write flow's safety where only processes show it: a shifted clock, races between processes. Everything
 * else of it runs in-process: test/unit/write/write-safety.test.ts. Here too, the calls around a race (the
 * dry-runs that mint its tokens, the reads after it) run in-process: only the racing calls are processes.
 */
const box = useSandbox()

async function dryRun(b: Sandbox, args: string[]): Promise<string> {
  const run = await tasksInProcess(b, [...args, '--dry-run'])
  expect(run.code, run.stdout).toBe(0)
  return env(run).data.confirm_token as string
}

function auditLines(b: Sandbox): Array<Record<string, unknown>> {
  try {
    return readFileSync(join(b.env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
  } catch {
    return []
  }
}

function expectRefused(run: ToolRun, reason: string): void {
  expect(run.code, run.stdout).toBe(6)
  expect(env(run).error).toMatchObject({ code: 'E_CONFLICT', retryable: false, details: { reason } })
}

describe('tokens are refused, and nothing is written', () => {
  it('an expired token → expired', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const dry = await tasks(box(), ['edit', '1', '--status', 'done', '--dry-run'], { env: shiftedClock(-11 * 60_000) })
    expect(dry.code, dry.stdout).toBe(0)
    const token = env(dry).data.confirm_token as string
    const before = storeBytes(box())
    expectRefused(await tasks(box(), ['edit', '1', '--status', 'done', '--confirm', token]), 'expired')
    expect(storeBytes(box())).toBe(before)
  })
})

function spawnConfirm(b: Sandbox, args: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TASKS_BIN, ...args], {
      env: { PATH: process.env.PATH, ...b.env },
      stdio: 'ignore',
    })
    child.on('close', (code) => resolve(code))
  })
}

describe('single use under a race', () => {
  it('four processes confirming one token: exactly one exit 0, three exit 6 (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const token = await dryRun(box(), ['create', '--title', `race ${round}`])
      const codes = await Promise.all(
        Array.from({ length: 4 }, () =>
          spawnConfirm(box(), ['create', '--title', `race ${round}`, '--confirm', token]),
        ),
      )
      expect(codes.sort()).toEqual([0, 6, 6, 6])
    }
    const all = env(await tasksInProcess(box(), ['list', '--limit', '100'])).data
    expect(all.count).toBe(10)
    const lines = auditLines(box())
    expect(lines.filter((l) => l.mode === 'confirm' && l.exit_code === 0)).toHaveLength(10)
    expect(lines.filter((l) => l.mode === 'refused' && l.exit_code === 6)).toHaveLength(30)
  })
})

describe('the confirm secret', () => {
  it('two first runs at once end with one secret', async () => {
    const codes = await Promise.all(
      Array.from({ length: 4 }, () => spawnConfirm(box(), ['create', '--title', 'same', '--dry-run'])),
    )
    expect(codes).toEqual([0, 0, 0, 0])
    const tokens = await Promise.all([1, 2, 3].map(() => dryRun(box(), ['create', '--title', 'same'])))
    for (const token of tokens)
      expect((await tasksInProcess(box(), ['create', '--title', 'same', '--confirm', token])).code).toBe(0)
  })
})

describe('idempotency', () => {
  it('two confirms with one key at once create one task', async () => {
    const tokens = [
      await dryRun(box(), ['create', '--title', 't', '--idempotency-key', 'k3']),
      await dryRun(box(), ['create', '--title', 't', '--idempotency-key', 'k3']),
    ]
    const codes = await Promise.all(
      tokens.map((token) =>
        spawnConfirm(box(), ['create', '--title', 't', '--idempotency-key', 'k3', '--confirm', token]),
      ),
    )
    expect(codes).toEqual([0, 0])
    expect(env(await tasksInProcess(box(), ['list'])).data.count).toBe(1)
  })
})
