import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'

// node:crypto's generator is watched, to show which source answered: the device, or the fallback.
const crypto = vi.hoisted(() => ({ calls: 0 }))
vi.mock('node:crypto', async (actual) => {
  const real = await actual<typeof import('node:crypto')>()
  return {
    ...real,
    randomBytes: (n: number) => {
      crypto.calls++
      return real.randomBytes(n)
    },
  }
})

const { osRandomBytes } = await import('../../../src/confirm/os-random.js')

let dir: string | undefined
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
  crypto.calls = 0
})

describe('osRandomBytes', () => {
  it('reads the OS CSPRNG device: n bytes, fresh each time, node:crypto not asked', () => {
    const a = osRandomBytes(16)
    const b = osRandomBytes(16)
    expect(a).toHaveLength(16)
    expect(a.equals(b)).toBe(false)
    expect(osRandomBytes(0)).toHaveLength(0)
    expect(osRandomBytes(4096)).toHaveLength(4096)
    expect(crypto.calls).toBe(0)
  })

  it('never takes a regular file planted at the path: node:crypto answers instead', () => {
    dir = mkdtempSync(join(tmpdir(), 'agentcli-random-'))
    const planted = join(dir, 'urandom')
    writeFileSync(planted, Buffer.alloc(64))
    const bytes = osRandomBytes(32, planted)
    expect(bytes).toHaveLength(32)
    expect(bytes.equals(Buffer.alloc(32))).toBe(false)
    expect(crypto.calls).toBe(1)
  })

  it('a device that gives nothing (the null device) or a missing one goes to node:crypto', () => {
    expect(osRandomBytes(16, '/dev/null').equals(Buffer.alloc(16))).toBe(false)
    expect(crypto.calls).toBe(1)
    expect(osRandomBytes(16, '/nonexistent/urandom')).toHaveLength(16)
    expect(crypto.calls).toBe(2)
  })
})
