import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { runBinInProcess } from '../../support/in-process.js'
import { makeInstall, snapshot } from '../../support/release.js'
import { stalledAsset, updateCalls } from '../../support/update-kit.js'
import {
  api,
  checksumsFor,
  identityFor,
  type Release,
  rootFile,
  serveRelease,
  signedAssets,
  useUpdateWorld,
} from '../../support/update-world.js'

// The bounds an author declares for an update (agentcli.update.limits and .timeouts in package.json), in-process
// (run(root, { io })): a release over its size, a download past its deadline, a malformed bound. Each is refused
// before extraction, so the release is any bytes (more than the archive limit below) with the right name. Bounds
// on processes (npm, the smoke run, the lock's holder): test/cli/update/update-robust.test.ts.
const box = useSandbox()
useUpdateWorld('update-bounds')
const release: Release = {
  name: `tasks-v0.2.0-${process.platform}-${process.arch}.tar.gz`,
  bytes: randomBytes(300_000),
}
let install: ReturnType<typeof makeInstall>
afterEach(() => install?.cleanup())

const { tool, confirm: confirmUpdate, untouched } = updateCalls(runBinInProcess, () => install)
const good = release
const signed = (r: Release) => signedAssets(r, identityFor('v0.2.0'))

/** Declare update timeouts in the installed version's package.json (what a tool author would ship). */
function setTimeouts(versionDir: string, timeouts: Record<string, number>): void {
  const path = join(versionDir, 'package.json')
  const pjson = JSON.parse(readFileSync(path, 'utf8'))
  pjson.agentcli.update.timeouts = timeouts
  writeFileSync(path, JSON.stringify(pjson, null, 2))
}

describe('a release bigger than the tool accepts', () => {
  it('an archive over archive_bytes is refused as it downloads: E_INTEGRITY too_large with its URL, nothing changed', async () => {
    install = makeInstall({ trusted_root: rootFile, limits: { archive_bytes: 100_000 } })
    serveRelease('v0.2.0', await signedAssets(release, identityFor('v0.2.0')))
    const before = snapshot(install.root)
    const run = await confirmUpdate(box())
    expect(run.code, run.stdout).toBe(1)
    expect(env(run).error).toMatchObject({
      code: 'E_INTEGRITY',
      retryable: false,
      details: {
        reason: 'too_large',
        stage: 'download',
        name: release.name,
        limit: 100_000,
        setting: 'agentcli.update.limits.archive_bytes',
        binary_replaced: false,
      },
    })
    expect(String(env(run).error.details.path)).toMatch(new RegExp(`/assets/${release.name.replace(/\./g, '\\.')}$`))
    await untouched(box(), before)
  })

  it('a checksums.txt over checksums_bytes fails the dry run: E_INTEGRITY too_large, no token', async () => {
    install = makeInstall({ trusted_root: rootFile, limits: { checksums_bytes: 1000 } })
    const padded = `${checksumsFor(release)}${'#'.repeat(2000)}\n`
    serveRelease('v0.2.0', await signedAssets(release, identityFor('v0.2.0'), padded))
    const dry = await tool(box(), ['update', '--dry-run'])
    expect(dry.code, dry.stdout).toBe(1)
    expect(env(dry).error).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'too_large', name: 'checksums.txt', setting: 'agentcli.update.limits.checksums_bytes' },
    })
  })

  it('a malformed limit in package.json is E_CONFIG with allowed/got', async () => {
    install = makeInstall({ trusted_root: rootFile, limits: { archive_bytes: -1 } })
    serveRelease('v0.2.0', await signedAssets(release, identityFor('v0.2.0')))
    const dry = await tool(box(), ['update', '--dry-run'])
    expect(env(dry).error).toMatchObject({
      code: 'E_CONFIG',
      details: { setting: 'agentcli.update.limits.archive_bytes', got: -1 },
    })
  })
})

describe('every step of an update is bounded', () => {
  beforeEach(() => {
    install = makeInstall({ trusted_root: rootFile })
  })

  it('a download that stalls is E_TIMEOUT at the download stage, within the declared deadline', async () => {
    setTimeouts(join(install.root, 'versions', '0.1.0'), { download_ms: 1_500 })
    serveRelease('v0.2.0', await signed(good))
    api.use(stalledAsset(good.name, good.bytes))
    const dry = await tool(box(), ['update', '--dry-run'])
    const before = snapshot(install.root)
    const started = Date.now()
    const run = await tool(box(), ['update', '--confirm', env(dry).data.confirm_token])
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(run.code, run.stdout).toBe(8)
    expect(env(run).error).toMatchObject({
      code: 'E_TIMEOUT',
      retryable: true,
      details: { stage: 'download', asset: good.name, timeout_ms: 1_500, binary_replaced: false },
    })
    expect(snapshot(install.root)).toEqual(before)
  }, 30_000)

  it('a malformed timeout in package.json is E_CONFIG with allowed/got', async () => {
    setTimeouts(join(install.root, 'versions', '0.1.0'), { download_ms: -5 })
    serveRelease('v0.2.0', await signed(good))
    const run = await tool(box(), ['update', '--dry-run'])
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIG',
      details: { setting: 'agentcli.update.timeouts.download_ms', got: -5 },
    })
  })
})
