import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runTool, type Sandbox } from 'agentcli/testing'
import { HttpResponse, http } from 'msw'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { env, ROOT, shiftedClock, useSandbox } from '../../support/helpers.js'
import { makeInstall, makeRelease, snapshot } from '../../support/release.js'
import { createTufRepo, type TufRepo } from '../../support/tuf-repo.js'
import {
  api,
  authority,
  confirmUpdate as confirmWith,
  identityFor,
  REPO,
  type Release,
  serveRelease,
  signedAssets,
  stranger,
  updateEnv,
  useUpdateWorld,
} from '../../support/update-world.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

// Command-level: a real standalone install of the example, releases and a TUF repository on loopback upstreams,
// bundles minted by a throw-away Sigstore authority (@sigstore/mock). Nothing here reaches the network.
const box = useSandbox()
useUpdateWorld('trust')

let release: Release
let install: ReturnType<typeof makeInstall>
let scratch: string

beforeAll(async () => {
  release = await makeRelease('0.2.0')
  scratch = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-trust-'))
}, 60_000)
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
afterEach(() => install?.cleanup())

/** The release assets with a bundle signed for `subject` by `by`. */
const assets = (subject: string, by = authority) => signedAssets(release, subject, undefined, by)

function tool(b: Sandbox, args: string[], extra: Record<string, string> = {}) {
  return runTool(install.bin, args, { env: updateEnv(b.env, extra) })
}

const confirmUpdate = (b: Sandbox, extra: Record<string, string> = {}) => confirmWith((args) => tool(b, args, extra))

/** A file under the scratch dir. */
function file(name: string, content: string): string {
  const path = join(scratch, `${Date.now()}-${Math.random().toString(36).slice(2)}-${name}`)
  writeFileSync(path, content)
  return path
}

async function expectRefused(b: Sandbox, code: string, details: Record<string, unknown>, extra = {}) {
  const before = snapshot(install.root)
  const run = await confirmUpdate(b, extra)
  expect(env(run).error, run.stdout).toMatchObject({ code, details })
  expect(env(run).error.details).toMatchObject({ binary_replaced: false, current_version: '0.1.0' })
  expect(snapshot(install.root)).toEqual(before)
  expect(env(await tool(b, ['--version'])).data.version).toBe('0.1.0')
  return run
}

describe('the identity comes from the version being installed', () => {
  /** A directory source (air-gapped machines) whose releases.json labels 0.2.0 with `tag`. */
  function directory(tag: string, files: Record<string, Buffer | string>): string {
    const dir = mkdtempSync(join(scratch, 'dir-'))
    for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body)
    writeFileSync(
      join(dir, 'releases.json'),
      JSON.stringify([{ version: '0.2.0', tag, assets: Object.keys(files).map((name) => ({ name })) }]),
    )
    return dir
  }

  it('a directory that labels 0.2.0 with the tag v0.2.01 is still held to the v0.2.0 identity', async () => {
    install = makeInstall({ trusted_root: file('root.json', JSON.stringify(authority.trustedRoot)) })
    const dir = directory('v0.2.01', await assets(identityFor('v0.2.01')))
    const run = await expectRefused(box(), 'E_INTEGRITY', { reason: 'identity_mismatch' }, { TASKS_UPDATE_SOURCE: dir })
    expect(run.code).toBe(1)
    expect(env(run).error.message).toContain(identityFor('v0.2.0'))
  })

  it('whatever the label, a release signed for the version it is installs', async () => {
    install = makeInstall({ trusted_root: file('root.json', JSON.stringify(authority.trustedRoot)) })
    const dir = directory('release-candidate', await assets(identityFor('v0.2.0')))
    const run = await confirmUpdate(box(), { TASKS_UPDATE_SOURCE: dir })
    expect(run.code, run.stdout).toBe(0)
    expect(env(run).data).toMatchObject({ current_version: '0.2.0', signature_verified: true })
  })
})

describe('the trusted root is refreshed through TUF', () => {
  let tuf: Upstream
  let repo: TufRepo
  beforeEach(async () => {
    repo = createTufRepo(authority.trustedRoot)
    tuf = await startUpstream(repo.handlers)
  })
  afterEach(() => tuf.close().catch(() => undefined))

  /** An install that trusts only what the loopback TUF repository signs. */
  const tufInstall = () => makeInstall({ tuf_mirror: `${tuf.url}tuf`, tuf_root: file('tuf-root.json', repo.rootJson) })

  it('doctor reports the trusted root in use, its age and expiry, and warns as its TUF root nears expiry', async () => {
    install = tufInstall()
    type Check = { check: string; status: string; message: string; fix: string | null }
    const doctor = async (extra: Record<string, string> = {}) => {
      const run = await tool(box(), ['doctor'], extra)
      expect(run.code, run.stdout + run.stderr).toBe(0)
      const data = env(run).data
      return { report: data.trusted_root, check: (data.checks as Check[]).find((c) => c.check === 'trusted_root')! }
    }
    const rootExpires = new Date(JSON.parse(repo.rootJson).signed.expires).toISOString()
    const fresh = await doctor()
    expect(fresh.report).toMatchObject({
      source: 'tuf_seed',
      mirror: `${tuf.url}tuf`,
      fetched_at: null,
      expires_at: rootExpires,
      age_days: null,
    })
    expect(fresh.check).toMatchObject({ status: 'pass', fix: null })
    expect(fresh.check.message).toMatch(/not fetched yet/)
    // An update that refreshes (and caches) the root through TUF, then refuses the release's identity: the tool
    // stays 0.1.0, whose package.json names this TUF repository.
    serveRelease('v0.2.0', await assets(identityFor('v9.9.9')))
    await expectRefused(box(), 'E_INTEGRITY', { reason: 'identity_mismatch' })
    const cached = await doctor()
    expect(cached.report).toMatchObject({ source: 'tuf_cache', expires_at: rootExpires, age_days: 0 })
    expect(Date.parse(cached.report.fetched_at)).toBeGreaterThan(Date.now() - 600_000)
    expect(Date.parse(cached.report.offline_until)).toBeLessThan(Date.parse(rootExpires))
    expect(cached.check).toMatchObject({ status: 'pass', fix: null })
    // The repository's root expires in 365 days: 340 days on, doctor warns; 400 days on, it says it expired.
    const DAY = 86_400_000
    const soon = await doctor(shiftedClock(340 * DAY))
    expect(soon.report.age_days).toBe(340)
    expect(soon.check).toMatchObject({ status: 'warn' })
    expect(soon.check.message).toMatch(/expires at/)
    expect(soon.check.fix).toMatch(/refreshes the TUF metadata/)
    const expired = await doctor(shiftedClock(400 * DAY))
    expect(expired.check).toMatchObject({ status: 'warn' })
    expect(expired.check.message).toMatch(/expired at/)
  })

  it('a fresh root from TUF verifies the release', async () => {
    install = tufInstall()
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    const run = await confirmUpdate(box())
    expect(run.code, run.stdout).toBe(0)
    expect(env(run).data).toMatchObject({ current_version: '0.2.0', signature_status: 'verified' })
    expect(repo.requests).toContain('targets/trusted_root.json')
  })

  it('a key rotation published through TUF is followed without a new release of the tool', async () => {
    install = tufInstall()
    repo.republish(stranger.trustedRoot)
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    await expectRefused(box(), 'E_INTEGRITY', { reason: 'root_untrusted' })
    repo.republish(authority.trustedRoot)
    const run = await confirmUpdate(box())
    expect(run.code, run.stdout).toBe(0)
  })

  it('offline, the copy TUF verified earlier is used', async () => {
    install = tufInstall()
    // A first attempt that loads (and caches) the root, then fails on the identity: nothing installed.
    serveRelease('v0.2.0', await assets(identityFor('v9.9.9')))
    await expectRefused(box(), 'E_INTEGRITY', { reason: 'identity_mismatch' })
    await tuf.close()
    api.reset()
    api.use(authority.handler)
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    const run = await confirmUpdate(box())
    expect(run.code, run.stdout).toBe(0)
    expect(env(run).data.current_version).toBe('0.2.0')
  })

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
    repo.republish(authority.trustedRoot, faults)
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0')))
    const run = await expectRefused(box(), 'E_INTEGRITY', { reason: 'root_untrusted' })
    expect(run.code).toBe(1)
  })

  it('no environment variable swaps the trust root: an attacker root in TASKS_SIGSTORE_TRUSTED_ROOT is ignored', async () => {
    install = tufInstall()
    serveRelease('v0.2.0', await assets(identityFor('v0.2.0'), stranger))
    await expectRefused(
      box(),
      'E_INTEGRITY',
      { reason: 'root_untrusted' },
      { TASKS_SIGSTORE_TRUSTED_ROOT: file('evil-root.json', JSON.stringify(stranger.trustedRoot)) },
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
    install = makeInstall({ trusted_root: file('root.json', JSON.stringify(authority.trustedRoot)) })
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
    install = makeInstall({ trusted_root: file('root.json', JSON.stringify(authority.trustedRoot)) })
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
    api.use(http.get(`*/repos/${REPO}/releases`, () => HttpResponse.json(body)))
    const run = await tool(box(), ['update', '--check'])
    expect(run.code, run.stdout).toBe(7)
    expect(env(run).error).toMatchObject({ code: 'E_SERVER', details: { stage: 'discover', reason: 'malformed_body' } })
  })

  it('an HTML page where the release list should be: E_SERVER malformed_body', async () => {
    install = makeInstall()
    api.use(http.get(`*/repos/${REPO}/releases`, () => HttpResponse.html('<html>maintenance</html>')))
    const run = await tool(box(), ['update', '--check'])
    expect(env(run).error).toMatchObject({ code: 'E_SERVER', details: { stage: 'discover', reason: 'malformed_body' } })
  })

  it('a directory whose releases.json is null: E_IO naming it', async () => {
    install = makeInstall()
    const dir = mkdtempSync(join(scratch, 'dir-'))
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
    const pinned = file('root.json', JSON.stringify(authority.trustedRoot))
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
