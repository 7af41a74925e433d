import { spawn, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { runTool, type ToolRun } from 'agentcli/testing'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { runBinInProcess } from '../../support/in-process.js'
import { makeInstall, makeRelease, snapshot } from '../../support/release.js'
import { updateCalls } from '../../support/update-kit.js'
import {
  identityFor,
  type Release,
  rootFile,
  serveRelease,
  signedAssets,
  updateEnv,
  useUpdateWorld,
} from '../../support/update-world.js'

// An update under faults: a disk that fills up while the release is written, a write the OS refuses, and a release
// signed the way cosign 3.1 signs by default. A release bigger than the tool accepts: test/unit/update/update-bounds.test.ts.

const box = useSandbox()
useUpdateWorld('update-faults')

let release: Release
let install: ReturnType<typeof makeInstall>

beforeAll(async () => {
  release = await makeRelease('0.2.0')
}, 60_000)
afterEach(() => install?.cleanup())

const { tool, confirm: confirmUpdate, untouched } = updateCalls(runTool, () => install)

/** Mount a tmpfs of `size` on `dir` (root only); false where the kernel does not let this run mount. */
function mount(dir: string, size: string): boolean {
  return (
    process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0
  )
}

const CAN_MOUNT = (() => {
  const probe = join(ROOT, 'test/fixtures', `.tmp-mount-probe-${process.pid}`)
  mkdirSync(probe, { recursive: true })
  const ok = mount(probe, '64k')
  if (ok) spawnSync('umount', [probe])
  rmSync(probe, { recursive: true, force: true })
  return ok
})()

describe('a disk that fills up during the update', () => {
  beforeEach(() => {
    install = makeInstall({ trusted_root: rootFile })
  })

  it.runIf(CAN_MOUNT)(
    'for real (versions/ on a tmpfs with room for less than the release): E_IO naming the file, nothing switched, no skill synced',
    async () => {
      serveRelease('v0.2.0', await signedAssets(release, identityFor('v0.2.0')))
      // versions/ becomes a small tmpfs holding 0.1.0 and about 200 KiB more: the release unpacks to ~1.2 MiB.
      const versions = join(install.root, 'versions')
      const aside = join(install.root, 'versions-aside')
      renameSync(versions, aside)
      mkdirSync(versions)
      const used = Number(spawnSync('du', ['-sk', aside], { encoding: 'utf8' }).stdout.split('\t')[0])
      expect(mount(versions, `${used + 200}k`)).toBe(true)
      try {
        cpSync(aside, versions, { recursive: true })
        rmSync(aside, { recursive: true, force: true })
        const before = snapshot(install.root)
        const run = await confirmUpdate(box())
        expect(run.code, run.stdout).toBe(1)
        expect(env(run).ok).toBe(false)
        expect(env(run).error).toMatchObject({
          code: 'E_IO',
          retryable: false,
          details: {
            stage: 'extract',
            errno: 'ENOSPC',
            binary_replaced: false,
            current_version: '0.1.0',
            skill_sync_status: 'not_started',
          },
        })
        expect(String(env(run).error.details.path)).toContain(join(versions, '0.2.0'))
        expect(readdirSync(versions)).toEqual(['0.1.0'])
        await untouched(box(), before)
      } finally {
        spawnSync('umount', [versions])
      }
    },
  )

  it('a write the OS refuses (a file-size limit, no root needed): E_IO naming the file, nothing switched', async () => {
    serveRelease('v0.2.0', await signedAssets(release, identityFor('v0.2.0')))
    const before = snapshot(install.root)
    // Only its token is used: the dry run needs no process of its own.
    const dry = await runBinInProcess(install.bin, ['update', '--dry-run'], { env: updateEnv(box().env) })
    expect(dry.code, dry.stdout).toBe(0)
    // A file-size limit just above the tarball's: it downloads, and dist/bundle-zod.cjs or dist/bundle.cjs (each
    // larger than the limit) cannot be written (EFBIG).
    const limit = Math.ceil(release.bytes.length / 1024) + 4
    expect(limit * 1024).toBeLessThan(statSync(join(ROOT, 'examples/tasks/dist/bundle-zod.cjs')).size)
    const run = await new Promise<ToolRun>((resolve) => {
      const child = spawn(
        'bash',
        [
          '-c',
          `ulimit -f ${limit}; exec "$0" "$@"`,
          process.execPath,
          install.bin,
          'update',
          '--confirm',
          env(dry).data.confirm_token,
        ],
        { env: { PATH: process.env.PATH ?? '', ...updateEnv(box().env) }, stdio: ['ignore', 'pipe', 'pipe'] },
      )
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (c: Buffer) => (stdout += c))
      child.stderr.on('data', (c: Buffer) => (stderr += c))
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, json: JSON.parse(stdout) }))
    })
    expect(run.code, run.stdout + run.stderr).toBe(1)
    expect(env(run).error).toMatchObject({
      code: 'E_IO',
      details: { stage: 'extract', errno: 'EFBIG', binary_replaced: false },
    })
    expect(String(env(run).error.details.path)).toMatch(/versions\/0\.2\.0\/dist\/bundle(-zod)?\.cjs$/)
    await untouched(box(), before)
  })
})

describe('a release signed the way cosign 3.1 signs by default', () => {
  it('bundle v0.3 with a Rekor v2 entry and an RFC 3161 timestamp: verified and installed', async () => {
    install = makeInstall({ trusted_root: rootFile })
    const assets = await signedAssets(release, identityFor('v0.2.0'), undefined, undefined, 'cosign3')
    const bundle = JSON.parse(assets['checksums.txt.sigstore.json'])
    expect(bundle.mediaType).toBe('application/vnd.dev.sigstore.bundle.v0.3+json')
    expect(bundle.verificationMaterial.tlogEntries[0].kindVersion.version).toBe('0.0.2')
    expect(bundle.verificationMaterial.timestampVerificationData.rfc3161Timestamps).toHaveLength(1)
    serveRelease('v0.2.0', assets)
    const run = await confirmUpdate(box())
    expect(run.code, run.stdout).toBe(0)
    expect(env(run).data).toMatchObject({
      current_version: '0.2.0',
      signature_status: 'verified',
      signature_verified: true,
      checksum_verified: true,
    })
    expect(env(await tool(box(), ['--version'])).data.version).toBe('0.2.0')
  })
})
