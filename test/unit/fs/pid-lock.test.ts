import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { clearLockDebris } from '../../../src/fs/pid-lock.js'
import { processIdentity } from '../../../src/jobs/liveness.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('the debris of a lock', () => {
  it('a fresh publishing temp file of a process that is gone is cleared at once; a live writer keeps its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-lock-'))
    dirs.push(dir)
    const lock = join(dir, 'update.lock')
    // A process that has exited: its PID names nobody (or, reused, another start time).
    const gone = spawnSync('true').pid
    writeFileSync(`${lock}.dead`, JSON.stringify({ pid: gone, start: '1', nonce: 'dead' }))
    const self = { pid: process.pid, start: processIdentity(process.pid), nonce: 'live' }
    writeFileSync(`${lock}.live`, JSON.stringify(self))
    // Cut short as it was written (killed inside writeFile): nobody to ask, so only its age can tell.
    writeFileSync(`${lock}.partial`, '{"pid": 4')
    // Cut short too, but named as the lock publishes its temp files (`<lock>.<pid>-<nonce>`): the name tells.
    writeFileSync(`${lock}.${gone}-0a1b`, '')
    writeFileSync(`${lock}.${process.pid}-2c3d`, '{"pid"')
    await clearLockDebris(lock)
    expect(existsSync(`${lock}.dead`)).toBe(false)
    expect(existsSync(`${lock}.live`)).toBe(true)
    expect(existsSync(`${lock}.partial`)).toBe(true)
    expect(existsSync(`${lock}.${gone}-0a1b`)).toBe(false)
    expect(existsSync(`${lock}.${process.pid}-2c3d`)).toBe(true)
  })
})
