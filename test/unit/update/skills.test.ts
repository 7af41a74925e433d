import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { syncSkill } from '../../../src/update/skills.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-skills-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A version directory whose skill holds `bytes` of SKILL.md. */
function versionWithSkill(bytes: Buffer): string {
  const dir = mkdtempSync(join(work, 'version-'))
  mkdirSync(join(dir, 'skills', 'tasks'), { recursive: true })
  writeFileSync(join(dir, 'skills', 'tasks', 'SKILL.md'), bytes)
  return dir
}

/** Mount a tmpfs of `size` on a new directory (root only); undefined where the kernel does not allow it. */
function tmpfs(size: string): { dir: string; unmount(): void } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const dir = mkdtempSync(join(work, 'home-'))
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status !== 0) return undefined
  return {
    dir,
    unmount: () => {
      spawnSync('umount', [dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const CAN_MOUNT = (() => {
  const probe = tmpfs('64k')
  probe?.unmount()
  return probe !== undefined
})()

describe('syncSkill', () => {
  it('copies the verified version’s skill into place', async () => {
    const home = mkdtempSync(join(work, 'home-'))
    const skill = Buffer.from('---\nname: tasks\n---\nUse it.\n')
    const done = await syncSkill({
      versionDir: versionWithSkill(skill),
      name: 'tasks',
      repository: 'a/b',
      env: { HOME: home },
    })
    expect(done.status).toBe('synced')
    expect(readFileSync(join(home, '.agents', 'skills', 'tasks', 'SKILL.md'))).toEqual(skill)
  })

  it.runIf(CAN_MOUNT)(
    'on a full disk (a small tmpfs as HOME): E_IO naming the skill, and the installed skill is left as it was',
    async () => {
      const home = tmpfs('256k')!
      try {
        const old = Buffer.from('---\nname: tasks\n---\nThe old skill.\n')
        await syncSkill({
          versionDir: versionWithSkill(old),
          name: 'tasks',
          repository: 'a/b',
          env: { HOME: home.dir },
        })
        // 512 KiB that does not compress: it cannot fit.
        const big = Buffer.alloc(512 * 1024)
        for (let i = 0; i < big.length; i += 32) createHash('sha256').update(String(i)).digest().copy(big, i)
        let error: { code?: string; details?: Record<string, unknown> } | undefined
        try {
          await syncSkill({
            versionDir: versionWithSkill(big),
            name: 'tasks',
            repository: 'a/b',
            env: { HOME: home.dir },
          })
        } catch (e) {
          error = e as typeof error
        }
        expect(error).toMatchObject({
          code: 'E_IO',
          details: { path: join(home.dir, '.agents', 'skills', 'tasks'), errno: 'ENOSPC' },
        })
        expect(readFileSync(join(home.dir, '.agents', 'skills', 'tasks', 'SKILL.md'))).toEqual(old)
        // No half-written copy is left beside it.
        expect(readdirSync(join(home.dir, '.agents', 'skills'))).toEqual(['tasks'])
      } finally {
        home.unmount()
      }
    },
  )
})
