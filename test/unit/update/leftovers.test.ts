import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { processIdentity } from '../../../src/jobs/liveness.js'
import { clearUpdateLeftovers } from '../../../src/update/leftovers.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-leftovers-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A standalone install root with version 1.0.0 current, a `.staging` left by a killed update, and a lock. */
function install(holderPid?: number): { root: string; toolRoot: string } {
  const root = mkdtempSync(join(work, 'install-'))
  const toolRoot = join(root, 'versions', '1.0.0')
  mkdirSync(toolRoot, { recursive: true })
  mkdirSync(join(root, 'versions', '.2.0.0.partial-abcd'))
  symlinkSync('versions/1.0.0', join(root, 'current'))
  mkdirSync(join(root, '.staging', 'download'), { recursive: true })
  writeFileSync(join(root, '.staging', 'download', 'release.tgz'), 'half')
  if (holderPid !== undefined)
    writeFileSync(
      join(root, 'update.lock'),
      JSON.stringify({ pid: holderPid, start: processIdentity(holderPid), nonce: 'n0nce' }),
    )
  return { root, toolRoot }
}

describe('what a killed update leaves behind is cleared on the next run', () => {
  it('clears .staging, partial versions and a dead holder’s lock, under the lock', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!
    const { root, toolRoot } = install(dead)
    await clearUpdateLeftovers(toolRoot)
    expect(existsSync(join(root, '.staging'))).toBe(false)
    expect(existsSync(join(root, 'versions', '.2.0.0.partial-abcd'))).toBe(false)
    expect(existsSync(join(root, 'update.lock'))).toBe(false)
    expect(existsSync(toolRoot)).toBe(true)
  })

  it('leaves everything to an update that is still running (its holder alive)', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' })
    try {
      await new Promise((resolve) => child.once('spawn', resolve))
      const { root, toolRoot } = install(child.pid!)
      await clearUpdateLeftovers(toolRoot)
      expect(existsSync(join(root, '.staging', 'download', 'release.tgz'))).toBe(true)
      expect(JSON.parse(readFileSync(join(root, 'update.lock'), 'utf8')).pid).toBe(child.pid)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('does nothing for a tool that is not a standalone install, or when nothing was left', async () => {
    const plain = mkdtempSync(join(work, 'plain-'))
    mkdirSync(join(plain, '.staging'))
    await clearUpdateLeftovers(join(plain, 'tool'))
    expect(existsSync(join(plain, '.staging'))).toBe(true)
    const { root, toolRoot } = install()
    rmSync(join(root, '.staging'), { recursive: true })
    await clearUpdateLeftovers(toolRoot)
    // Nothing to clear: the partial version stays until something else is left (or the next update).
    expect(existsSync(join(root, 'versions', '.2.0.0.partial-abcd'))).toBe(true)
  })
})
