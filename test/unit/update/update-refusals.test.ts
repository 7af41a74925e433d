import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CHECK_FAILURE_FILE, RECENT_CHECK_MS, RECENT_FAILURE_MS } from '../../../src/update/recent-check.js'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { runBinInProcess, tasksInProcess } from '../../support/in-process.js'
import { makeInstall, snapshot } from '../../support/release.js'
import { updateCalls } from '../../support/update-kit.js'
import type { Assets, Release } from '../../support/update-world.js'
// The world's authorities, upstream and root file are live bindings, filled in its hooks: read through the namespace.
import * as world from '../../support/update-world.js'

const { checksumsFor, identityFor, REPO, serveRelease, signedAssets, useUpdateWorld } = world

// `update` of a standalone install in-process (run(root, { io })): what it reports, and every refusal before a
// byte is installed. Verification fails before extraction, so the release is any bytes with the right name; what
// only a process shows (the install and switch, signals, kills) is test/cli/update/update.test.ts.
const box = useSandbox()
useUpdateWorld('refusals')
const release: Release = { name: `tasks-v0.2.0-${process.platform}-${process.arch}.tar.gz`, bytes: randomBytes(4096) }
let install: ReturnType<typeof makeInstall>

beforeEach(() => {
  install = makeInstall({ trusted_root: world.rootFile })
})
afterEach(() => install.cleanup())

const goodAssets = () => signedAssets(release, identityFor('v0.2.0'))
const { tool, confirm: confirmUpdate } = updateCalls(runBinInProcess, () => install)

describe('update --check', () => {
  it('reports the target, the install method and the signing material, and refreshes the notice cache only', async () => {
    serveRelease('v0.2.0', await goodAssets())
    const before = snapshot(install.root)
    const run = await tool(box(), ['update', '--check'])
    expect(run.code, run.stdout).toBe(0)
    expect(env(run).data).toMatchObject({
      current_version: '0.1.0',
      target_version: '0.2.0',
      update_available: true,
      install_method: 'standalone',
      channel: 'stable',
      checksums_available: true,
      signature_available: true,
      // The `tasks` on PATH is another install: the hint starts this one the way it was started.
      recommended_command: expect.stringMatching(new RegExp(`node ${install.bin} update --dry-run$`)),
      changes: { package: true, skills: true },
    })
    expect(snapshot(install.root)).toEqual(before)
    const list = await tool(box(), ['list'])
    expect(env(list).meta.notices).toEqual([
      expect.objectContaining({
        type: 'update_available',
        current_version: '0.1.0',
        latest_version: '0.2.0',
        install_method: 'standalone',
        recommended_command: expect.stringMatching(new RegExp(`node ${install.bin} update --dry-run$`)),
        severity: 'info',
      }),
    ])
  })

  it('a network failure is E_NETWORK at the discover stage', async () => {
    const run = await tool(box(), ['update', '--check'], { TASKS_UPDATE_API_URL: 'http://127.0.0.1:9/' })
    expect(run.code).toBe(7)
    expect(env(run).error).toMatchObject({ code: 'E_NETWORK', details: { stage: 'discover' } })
  })

  it('an install it cannot recognise is reported with the command a person should run', async () => {
    serveRelease('v0.2.0', await goodAssets())
    const run = await tasksInProcess(box(), ['update', '--dry-run'], { env: { TASKS_UPDATE_API_URL: world.api.url } })
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIG',
      details: { install_method: 'unknown', fix: 'npm install -g tasks-example@0.2.0' },
    })
  })
})

describe('integrity failures fail closed, and nothing installed changes', () => {
  const resigned = async (bundle: Promise<unknown>) => ({
    assets: { ...(await goodAssets()), 'checksums.txt.sigstore.json': JSON.stringify(await bundle) },
  })
  const sums = () => Buffer.from(checksumsFor(release))
  type Case = [string, () => Promise<{ tag?: string; assets: Assets }>, string]
  const cases: Case[] = [
    ['no checksums file', async () => ({ assets: { [release.name]: release.bytes } }), 'checksum_missing'],
    [
      'no entry for the asset',
      async () => ({ assets: { ...(await goodAssets()), 'checksums.txt': `${'0'.repeat(64)}  other.tar.gz\n` } }),
      'checksum_missing',
    ],
    [
      'a wrong hash',
      async () => ({
        assets: await signedAssets(release, identityFor('v0.2.0'), `${'ab'.repeat(32)}  ${release.name}\n`),
      }),
      'checksum_mismatch',
    ],
    [
      'no bundle',
      async () => ({ assets: { [release.name]: release.bytes, 'checksums.txt': checksumsFor(release) } }),
      'signature_missing',
    ],
    [
      'a legacy cosign bundle',
      async () => ({
        assets: {
          ...(await goodAssets()),
          'checksums.txt.sigstore.json': JSON.stringify({ base64Signature: 'MEUCIQ==', cert: 'LS0t' }),
        },
      }),
      'bundle_invalid',
    ],
    [
      'a bundle over other bytes',
      () => resigned(world.authority.sign(Buffer.from('other\n'), identityFor('v0.2.0'))),
      'signature_invalid',
    ],
    [
      'a certificate for another repo',
      () => resigned(world.authority.sign(sums(), identityFor('v0.2.0', 'evil/tasks-example'))),
      'identity_mismatch',
    ],
    [
      'a certificate for another workflow',
      () => resigned(world.authority.sign(sums(), identityFor('v0.2.0', REPO, '.github/workflows/other.yml'))),
      'identity_mismatch',
    ],
    [
      'a certificate for v1.2.30 when v1.2.3 is expected',
      async () => {
        const r = { name: `tasks-v1.2.3-${process.platform}-${process.arch}.tar.gz`, bytes: release.bytes }
        return { tag: 'v1.2.3', assets: await signedAssets(r, identityFor('v1.2.30')) }
      },
      'identity_mismatch',
    ],
    [
      'the wrong issuer',
      () => resigned(world.authority.sign(sums(), identityFor('v0.2.0'), 'https://accounts.google.com')),
      'issuer_mismatch',
    ],
    [
      'a bundle chained to an untrusted root',
      () => resigned(world.stranger.sign(sums(), identityFor('v0.2.0'))),
      'root_untrusted',
    ],
  ]
  it.each(cases)('%s → E_INTEGRITY %s', async (_, make, reason) => {
    const { tag = 'v0.2.0', assets } = await make()
    serveRelease(tag, assets)
    const before = snapshot(install.root)
    const run = await confirmUpdate(box())
    expect(run.code, run.stdout).toBe(1)
    expect(env(run).error).toMatchObject({ code: 'E_INTEGRITY', retryable: false, details: { reason } })
    if (env(run).error.details.stage !== 'discover')
      expect(env(run).error.details).toMatchObject({ binary_replaced: false, current_version: '0.1.0' })
    expect(snapshot(install.root)).toEqual(before)
    expect(env(await tool(box(), ['--version'])).data.version).toBe('0.1.0')
  })
})

describe('an npm global install', () => {
  it('is detected, and previewed as an npm install of the target version', async () => {
    serveRelease('v0.2.0', await goodAssets())
    const base = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-install-npm-'))
    try {
      const prefix = join(base, 'prefix')
      const pkg = join(prefix, 'lib', 'node_modules', 'tasks-example')
      cpSync(join(install.root, 'versions', '0.1.0'), pkg, { recursive: true })
      const stubs = join(base, 'stubs')
      mkdirSync(stubs)
      const log = join(base, 'npm.log')
      writeFileSync(
        join(stubs, 'npm'),
        `#!/bin/sh\nif [ "$1" = prefix ]; then echo "${prefix}"; exit 0; fi\necho "$@" >> "${log}"\n`,
        { mode: 0o755 },
      )
      const run = (args: string[]) =>
        runBinInProcess(join(pkg, 'bin', 'run.js'), args, {
          env: { ...box().env, PATH: `${stubs}:${process.env.PATH}`, TASKS_UPDATE_API_URL: world.api.url },
        })
      expect(env(await run(['update', '--check'])).data).toMatchObject({
        install_method: 'npm',
        update_available: true,
      })
      const dry = await run(['update', '--dry-run'])
      expect(env(dry).data.preview.changes.map((c: { action: string }) => c.action)).toEqual(['npm_install'])
      // --confirm verifies the registry's provenance before npm runs: update-npm.test.ts.
      expect(existsSync(log)).toBe(false)
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })
})

describe('doctor', () => {
  it('warns when a newer release is out, and never fails offline', async () => {
    serveRelease('v0.2.0', await goodAssets())
    const online = await tool(box(), ['doctor'])
    expect(env(online).data.checks.find((c: { check: string }) => c.check === 'update')).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(new RegExp(`node ${install.bin} update --dry-run$`)),
    })
    const offline = await tool(box(), ['doctor'], { TASKS_UPDATE_API_URL: 'http://127.0.0.1:9/' })
    expect(offline.code).toBe(0)
    // A check that could not run is a warning, not a pass (and still not a failure of doctor).
    expect(env(offline).data.checks.find((c: { check: string }) => c.check === 'update')).toMatchObject({
      status: 'warn',
      message: expect.stringMatching(/^could not check for updates/),
    })
  })

  const updateOf = (run: Awaited<ReturnType<typeof tool>>) =>
    env(run).data.checks.find((c: { check: string }) => c.check === 'update') as { status: string; message: string }
  const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/
  /** Move the `checked_at` of a cache file `ms` into the past. */
  const age = (file: string, ms: number) => {
    const value = JSON.parse(readFileSync(file, 'utf8'))
    value.checked_at = new Date(Date.parse(value.checked_at) - ms).toISOString()
    writeFileSync(file, JSON.stringify(value))
  }

  it('answers from a check of the same source made minutes ago, saying when; a stale one asks again', async () => {
    const b = box()
    const notice = join(b.env.XDG_CACHE_HOME!, 'tasks', 'update-notice.json')
    serveRelease('v0.2.0', await goodAssets())
    const first = updateOf(await tool(b, ['doctor']))
    expect(first.status).toBe('warn')
    expect(first.message).toMatch(new RegExp(`^0\\.2\\.0 is available \\(running 0\\.1\\.0; checked ${ISO.source}\\)$`))
    // The source now has 0.3.0: a doctor within RECENT_CHECK_MS reports what the last check saw, and when.
    serveRelease('v0.3.0', await goodAssets())
    const cached = updateOf(await tool(b, ['doctor']))
    expect(cached.status).toBe('warn')
    expect(cached.message).toMatch(
      new RegExp(`^0\\.2\\.0 is available \\(running 0\\.1\\.0; checked ${ISO.source}\\)$`),
    )
    expect(cached.message).toContain(JSON.parse(readFileSync(notice, 'utf8')).checked_at)
    // Another source (here: another API URL) is never answered from it: that one is asked, and fails.
    const elsewhere = updateOf(await tool(b, ['doctor'], { TASKS_UPDATE_API_URL: 'http://127.0.0.1:9/' }))
    expect(elsewhere.message).toMatch(new RegExp(`^could not check for updates at ${ISO.source}: `))
    // Past the window, the source is asked again and 0.3.0 seen: a live answer.
    age(notice, RECENT_CHECK_MS)
    const live = updateOf(await tool(b, ['doctor']))
    expect(live.status).toBe('warn')
    expect(live.message).toMatch(new RegExp(`^0\\.3\\.0 is available \\(running 0\\.1\\.0; checked ${ISO.source}\\)$`))
  })

  it('reports a network failure of the last minute again, saying when; past the minute it asks again', async () => {
    const b = box()
    const failure = join(b.env.XDG_CACHE_HOME!, 'tasks', CHECK_FAILURE_FILE)
    const offline = { TASKS_UPDATE_API_URL: 'http://127.0.0.1:9/' }
    const first = updateOf(await tool(b, ['doctor'], offline))
    const recorded = JSON.parse(readFileSync(failure, 'utf8')).checked_at
    // The live failure and its repeat read alike: the same time, the same reason.
    expect(first).toMatchObject({
      status: 'warn',
      message: `could not check for updates at ${recorded}: ${JSON.parse(readFileSync(failure, 'utf8')).message}`,
    })
    const again = updateOf(await tool(b, ['doctor'], offline))
    expect(again).toEqual(first)
    // The reachable source is not held back by the other one's failure, and a success clears the failure.
    serveRelease('v0.1.0', {})
    const online = updateOf(await tool(b, ['doctor']))
    expect(online.status).toBe('pass')
    expect(online.message).toMatch(
      new RegExp(`^0\\.1\\.0 is the newest on the stable channel \\(checked ${ISO.source}\\)$`),
    )
    expect(existsSync(failure)).toBe(false)
    // A failure older than RECENT_FAILURE_MS is not reported again: the network is asked (and fails again here).
    updateOf(await tool(b, ['doctor'], offline))
    age(failure, RECENT_FAILURE_MS)
    const aged = JSON.parse(readFileSync(failure, 'utf8')).checked_at
    const retried = updateOf(await tool(b, ['doctor'], offline)).message
    expect(retried).toMatch(new RegExp(`^could not check for updates at ${ISO.source}: `))
    expect(retried).not.toContain(aged)
  })
})
