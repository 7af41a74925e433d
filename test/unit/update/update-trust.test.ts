import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { HttpResponse, http } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { runBinInProcess } from '../../support/in-process.js'
import { makeInstall } from '../../support/release.js'
import { createTufRepo, type TufRepo } from '../../support/tuf-repo.js'
import { updateCalls, useScratch } from '../../support/update-kit.js'
import type { Release } from '../../support/update-world.js'
// The world's authorities, upstream and root file are live bindings, filled in its hooks: read through the namespace.
import * as world from '../../support/update-world.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

const { identityFor, REPO, serveRelease, signedAssets, useUpdateWorld } = world

// The trust of an update in-process (run(root, { io })): the identity, the TUF-refreshed root, malformed trust
// material, the notice cache, offline checks, malformed release lists; releases and a TUF repository on loopback
// upstreams, bundles minted by a throw-away Sigstore authority (@sigstore/mock). Every update here is refused
// before extraction, so the release is any bytes with the right name; the updates that install, and the clock
// moved by a preload, are test/cli/update/update-trust.test.ts.
const box = useSandbox()
useUpdateWorld('trust-unit')

const release: Release = { name: `tasks-v0.2.0-${process.platform}-${process.arch}.tar.gz`, bytes: randomBytes(4096) }
let install: ReturnType<typeof makeInstall>

afterEach(() => install?.cleanup())

/** The release assets with a bundle signed for `subject` by `by`. */
const assets = (subject: string, by = world.authority) => signedAssets(release, subject, undefined, by)

const { tool, expectRefused } = updateCalls(runBinInProcess, () => install)
const { file, directory, dir: scratchDir } = useScratch('trust-unit')

describe('the identity comes from the version being installed', () => {
  it('a directory that labels 0.2.0 with the tag v0.2.01 is still held to the v0.2.0 identity', async () => {
    install = makeInstall({ trusted_root: file('root.json', JSON.stringify(world.authority.trustedRoot)) })
    const dir = directory('v0.2.01', await assets(identityFor('v0.2.01')))
    const run = await expectRefused(box(), 'E_INTEGRITY', { reason: 'identity_mismatch' }, { TASKS_UPDATE_SOURCE: dir })
    expect(run.code).toBe(1)
    expect(env(run).error.message).toContain(identityFor('v0.2.0'))
  })
})

describe('the trusted root is refreshed through TUF', () => {
  let tuf: Upstream
  let repo: TufRepo
  beforeEach(async () => {
    repo = createTufRepo(world.authority.trustedRoot)
    tuf = await startUpstream(repo.handlers)
  })
  afterEach(() => tuf.close().catch(() => undefined))

  /** An install that trusts only what the loopback TUF repository signs. */
  const tufInstall = () => makeInstall({ tuf_mirror: `${tuf.url}tuf`, tuf_root: file('tuf-root.json', repo.rootJson) })

  it('offline with nothing cached is E_NETWORK trust_root_unavailable, naming the host; nothing installed', async () => {
    install = tufInstall()
    await tuf.close()
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    const run = await expectRefused(box(), 'E_NETWORK', {
      reason: 'trust_root_unavailable',
      host: new URL(tuf.url).host,
      stage: 'verify_signature',
    })
    expect(run.code).toBe(7)
  })

  it.each([
    ['a tampered trusted root', { tamperTarget: true }],
    ['unsigned (foreign-key) metadata', { foreignTimestampKey: true }],
    ['expired metadata', { expired: true }],
  ])('%s is refused: E_INTEGRITY root_untrusted, fail closed', async (_, faults) => {
    install = tufInstall()
    repo.republish(world.authority.trustedRoot, faults)
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    const run = await expectRefused(box(), 'E_INTEGRITY', { reason: 'root_untrusted' })
    expect(run.code).toBe(1)
  })

  it('no environment variable swaps the trust root: an attacker root in TASKS_SIGSTORE_TRUSTED_ROOT is ignored', async () => {
    install = tufInstall()
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0'), world.stranger))
    await expectRefused(
      box(),
      'E_INTEGRITY',
      { reason: 'root_untrusted' },
      { TASKS_SIGSTORE_TRUSTED_ROOT: file('evil-root.json', JSON.stringify(world.stranger.trustedRoot)) },
    )
  })
})

describe('malformed trust material is a clear code, never E_INTERNAL', () => {
  it.each([
    ['not JSON', '{ truncated'],
    ['JSON of another kind', '{"hello": "world"}'],
  ])('a pinned trusted root that is %s is E_CONFIG (exit 4) naming the file', async (_, content) => {
    const path = file('bad-root.json', content)
    install = makeInstall({ trusted_root: path })
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    const run = await expectRefused(box(), 'E_CONFIG', { path, stage: 'verify_signature' })
    expect(run.code).toBe(4)
  })

  it.each([
    ['a number', '42'],
    ['a JSON string', '"bundle"'],
    ['text', 'this is not a bundle'],
    [
      'a null log entry',
      JSON.stringify({
        mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
        verificationMaterial: { tlogEntries: [null] },
      }),
    ],
  ])('a bundle that is %s is E_INTEGRITY bundle_invalid', async (_, bundle) => {
    install = makeInstall({ trusted_root: file('root.json', JSON.stringify(world.authority.trustedRoot)) })
    serveRelease('v0.2.0', { ...(await assets(identityFor('v0.2.0'))), 'checksums.txt.sigstore.json': bundle })
    const run = await expectRefused(box(), 'E_INTEGRITY', { reason: 'bundle_invalid' })
    expect(run.code).toBe(1)
  })
})

describe('a corrupt update-notice cache never breaks a command', () => {
  const cacheFile = (b: Sandbox) => join(b.env.XDG_CACHE_HOME!, 'tasks', 'update-notice.json')
  it.each([
    ['null', 'null'],
    ['garbage', '\u0000\u0001 not json'],
    ['a wrong shape', '{"latest_version": 5, "severity": "loud"}'],
    ['an array', '[1, 2]'],
    ['a directory', null],
  ])('%s: --version, list and update --check answer, and --check rewrites it', async (_, content) => {
    install = makeInstall({ trusted_root: file('root.json', JSON.stringify(world.authority.trustedRoot)) })
    const b = box()
    const path = cacheFile(b)
    mkdirSync(join(path, '..'), { recursive: true })
    if (content === null) mkdirSync(join(path, 'inner'), { recursive: true })
    else writeFileSync(path, content)
    const version = await tool(b, ['--version'])
    expect(version.code, version.stdout).toBe(0)
    expect(env(version).data.version).toBe('0.1.0')
    if (content !== null) writeFileSync(path, content)
    const list = await tool(b, ['list'])
    expect(list.code, list.stdout).toBe(0)
    expect(env(list).meta.notices ?? []).toEqual([])
    if (content !== null) writeFileSync(path, content)
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    const check = await tool(b, ['update', '--check'])
    expect(check.code, check.stdout).toBe(0)
    expect(env(check).data.update_available).toBe(true)
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ latest_version: '0.2.0' })
    const after = await tool(b, ['list'])
    expect(env(after).meta.notices).toEqual([expect.objectContaining({ latest_version: '0.2.0' })])
  })

  it('a read that finds a corrupt cache removes it', async () => {
    install = makeInstall()
    const b = box()
    const path = cacheFile(b)
    mkdirSync(join(path, '..'), { recursive: true })
    writeFileSync(path, 'null')
    expect((await tool(b, ['list'])).code).toBe(0)
    expect(existsSync(path)).toBe(false)
  })
})

describe('offline checks say so', () => {
  it('update --check with a host that does not resolve: E_NETWORK name_resolution with the host and a hint', async () => {
    install = makeInstall()
    const run = await tool(box(), ['update', '--check'], { TASKS_UPDATE_API_URL: 'http://agentcli-test.invalid/' })
    expect(run.code).toBe(7)
    expect(env(run).error).toMatchObject({
      code: 'E_NETWORK',
      retryable: true,
      details: { stage: 'discover', reason: 'name_resolution', host: 'agentcli-test.invalid' },
    })
    expect(env(run).error.details.hint).toMatch(/does not resolve/)
  })

  it('offline, update --check says what was last known (stale); context reports it; nothing cached is null', async () => {
    install = makeInstall()
    const b = box()
    const offline = { TASKS_UPDATE_API_URL: 'http://agentcli-test.invalid/' }
    // Nothing checked yet: context says null, an offline check fails with last_known null.
    expect(env(await tool(b, ['context'])).data.update_check).toBeNull()
    const none = await tool(b, ['update', '--check'], offline)
    expect(env(none).error).toMatchObject({ code: 'E_NETWORK', details: { last_known: null } })
    // An online check that finds nothing newer still records what it saw, and when.
    serveRelease('v0.1.0', {})
    const online = await tool(b, ['update', '--check'])
    expect(env(online).data).toMatchObject({ update_available: false, target_version: '0.1.0' })
    const seen = env(await tool(b, ['context'])).data.update_check
    expect(seen).toEqual({ latest: '0.1.0', checked_at: expect.stringMatching(/Z$/) })
    // Nothing newer: no notice on other commands.
    expect(env(await tool(b, ['list'])).meta.notices ?? []).toEqual([])
    const stale = await tool(b, ['update', '--check'], offline)
    expect(stale.code).toBe(7)
    expect(env(stale).error.details).toMatchObject({
      stage: 'discover',
      reason: 'name_resolution',
      last_known: { ...seen, stale: true },
    })
  })

  it('doctor reports an update check that could not run as warn, with the hint as its fix', async () => {
    install = makeInstall()
    const run = await tool(box(), ['doctor'], { TASKS_UPDATE_API_URL: 'http://agentcli-test.invalid/' })
    const check = (env(run).data.checks as Array<{ check: string; status: string; message: string; fix: string }>).find(
      (c) => c.check === 'update',
    )
    expect(check).toMatchObject({ status: 'warn', message: expect.stringMatching(/^could not check for updates/) })
    expect(check!.fix).toMatch(/does not resolve/)
  })

  it('doctor with a reachable source still passes its update check', async () => {
    install = makeInstall()
    serveRelease('v0.1.0', {})
    const run = await tool(box(), ['doctor'])
    const check = (env(run).data.checks as Array<{ check: string; status: string }>).find((c) => c.check === 'update')
    expect(check).toMatchObject({ status: 'pass', fix: null })
  })
})

describe('a malformed release list is the source fault, never E_INTERNAL', () => {
  it.each([
    ['an object instead of a list', { message: 'rate limited' }],
    ['a release without assets', [{ tag_name: 'v0.2.0', assets: null }]],
    ['an asset that is null', [{ tag_name: 'v0.2.0', assets: [null] }]],
  ])('GitHub answering %s: E_SERVER malformed_body at discover', async (_, body) => {
    install = makeInstall()
    world.api.use(http.get(`*/repos/${REPO}/releases`, () => HttpResponse.json(body)))
    const run = await tool(box(), ['update', '--check'])
    expect(run.code, run.stdout).toBe(7)
    expect(env(run).error).toMatchObject({ code: 'E_SERVER', details: { stage: 'discover', reason: 'malformed_body' } })
  })

  it('an HTML page where the release list should be: E_SERVER malformed_body', async () => {
    install = makeInstall()
    world.api.use(http.get(`*/repos/${REPO}/releases`, () => HttpResponse.html('<html>maintenance</html>')))
    const run = await tool(box(), ['update', '--check'])
    expect(env(run).error).toMatchObject({ code: 'E_SERVER', details: { stage: 'discover', reason: 'malformed_body' } })
  })

  it('a directory whose releases.json is null: E_IO naming it', async () => {
    install = makeInstall()
    const dir = mkdtempSync(join(scratchDir(), 'dir-'))
    writeFileSync(join(dir, 'releases.json'), 'null')
    const run = await tool(box(), ['update', '--check'], { TASKS_UPDATE_SOURCE: dir })
    expect(run.code).toBe(1)
    expect(env(run).error).toMatchObject({
      code: 'E_IO',
      details: { stage: 'discover', path: join(dir, 'releases.json') },
    })
  })
})

describe('doctor and a pinned trusted root', () => {
  it('reports the pinned file, its age, no TUF expiry; a tool that does not self-update reports none', async () => {
    const pinned = file('root.json', JSON.stringify(world.authority.trustedRoot))
    install = makeInstall({ trusted_root: pinned })
    const run = await tool(box(), ['doctor'])
    expect(env(run).data.trusted_root).toMatchObject({
      source: 'pinned',
      path: pinned,
      mirror: null,
      expires_at: null,
      offline_until: null,
      age_days: 0,
    })
    expect(env(run).data.checks).toContainEqual(
      expect.objectContaining({ check: 'trusted_root', status: 'pass', fix: null }),
    )
    install.cleanup()
    install = makeInstall({ repository: null })
    const none = await tool(box(), ['doctor'])
    expect(env(none).data.trusted_root).toBeNull()
    expect(env(none).data.checks.map((c: { check: string }) => c.check)).not.toContain('trusted_root')
  })
})
