import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isBeforeChange } from '../../../src/errors/before-change.js'
import { withFileLock } from '../../../src/fs/lock.js'
import { type RunState, setRunState } from '../../../src/runtime/run-state.js'
import { DEFAULT_LOCK_TIMEOUT_MS, lockTimeoutMsOf } from '../../../src/settings/lock-wait.js'

/** Just what the setting reads of a tool's config. */
function config(locks?: unknown): never {
  return { bin: 'tasks', pjson: { agentcli: locks === undefined ? {} : { locks } } } as never
}

const dirs: string[] = []
afterEach(() => {
  setRunState(undefined)
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A file whose lock another process holds (fresh: never broken as stale). */
function held(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lock-wait-'))
  dirs.push(dir)
  const path = join(dir, 'state.json')
  mkdirSync(`${path}.lock`)
  return path
}

function withSetting(lockTimeoutMs: () => number): void {
  setRunState({ lockTimeoutMs } as RunState)
}

describe('agentcli.locks.timeout_ms', () => {
  it('unset is the 10 s default; an integer 0..600000 is taken as is', () => {
    expect(DEFAULT_LOCK_TIMEOUT_MS).toBe(10_000)
    expect(lockTimeoutMsOf(config())).toBe(10_000)
    expect(lockTimeoutMsOf(config({ timeout_ms: 0 }))).toBe(0)
    expect(lockTimeoutMsOf(config({ timeout_ms: 600_000 }))).toBe(600_000)
  })

  it.each([-1, 1.5, '100', 600_001, null, true])('%j is E_CONFIG naming the setting, never the default', (bad) => {
    expect(() => lockTimeoutMsOf(config({ timeout_ms: bad }))).toThrow(
      expect.objectContaining({
        code: 'E_CONFIG',
        details: { setting: 'agentcli.locks.timeout_ms', allowed: '0..600000', got: bad },
      }),
    )
  })

  it("is withFileLock's wait for a held lock: E_TIMEOUT after it, before any change", async () => {
    withSetting(() => 200)
    const started = Date.now()
    const error = await withFileLock(held(), async () => 'ran').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_TIMEOUT' })
    expect(isBeforeChange(error)).toBe(true)
    // Far below the 10 s default: the setting was followed (the bound leaves room for a loaded machine).
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it('a caller that names its own timeout keeps it', async () => {
    withSetting(() => 600_000)
    const error = await withFileLock(held(), async () => 'ran', { timeoutMs: 0 }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_TIMEOUT' })
  })

  it('a malformed setting is E_CONFIG from the lock, before any change, and fn never runs', async () => {
    withSetting(() => lockTimeoutMsOf(config({ timeout_ms: 'soon' })))
    let ran = false
    const error = await withFileLock(held(), async () => {
      ran = true
    }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_CONFIG', details: { setting: 'agentcli.locks.timeout_ms' } })
    expect(isBeforeChange(error)).toBe(true)
    expect(ran).toBe(false)
  })
})
