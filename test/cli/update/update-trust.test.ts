import { runTool, type Sandbox } from 'agentcli/testing'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { env, shiftedClock, useSandbox } from '../../support/helpers.js'
import { runBinInProcess } from '../../support/in-process.js'
import { makeInstall, makeRelease } from '../../support/release.js'
import { createTufRepo, type TufRepo } from '../../support/tuf-repo.js'
import { updateCalls, useScratch } from '../../support/update-kit.js'
import {
  api,
  authority,
  identityFor,
  type Release,
  serveRelease,
  signedAssets,
  stranger,
  useUpdateWorld,
} from '../../support/update-world.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

// Command-level: a real standalone install of the example, releases and a TUF repository on loopback upstreams,
// bundles minted by a throw-away Sigstore authority (@sigstore/mock). Nothing here reaches the network.
const box = useSandbox()
useUpdateWorld('trust')

let release: Release
let install: ReturnType<typeof makeInstall>

beforeAll(async () => {
  release = await makeRelease('0.2.0')
}, 60_000)
afterEach(() => install?.cleanup())

/** The release assets with a bundle signed for `subject` by `by`. */
const assets = (subject: string, by = authority) => signedAssets(release, subject, undefined, by)

// Only the updates that install, and the clock moved by a preload, need the bin's own process; the dry runs, the
// refused updates (nothing extracted) and the other reads run in-process.
const { tool } = updateCalls(runTool, () => install)
const { tool: inProcess, expectRefused } = updateCalls(runBinInProcess, () => install)

/** A dry run in-process for its token, then the confirm, which installs, by the real bin. */
async function confirmUpdate(b: Sandbox, extra: Record<string, string> = {}) {
  const dry = await inProcess(b, ['update', '--dry-run'], extra)
  if (dry.code !== 0) return dry
  return tool(b, ['update', '--confirm', env(dry).data.confirm_token], extra)
}
const { file, directory } = useScratch('trust')

describe('the identity comes from the version being installed', () => {
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
      // The clock moved by a preload needs a process; the doctor of the moment runs in-process.
      const run = await (Object.keys(extra).length > 0 ? tool : inProcess)(box(), ['doctor'], extra)
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
})
