import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PUBLIC_GOOD_TUF_MIRROR } from '../../../src/update/settings.js'
import { loadTrustedRoot } from '../../../src/update/trust-root.js'
import { trustRootReport } from '../../../src/update/trust-root-status.js'
import { createTufRepo } from '../../support/tuf-repo.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

const DAY = 86_400_000
const ROOT_A = { mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1', tlogs: [], ctlogs: [] }

let dir: string
let upstream: Upstream | undefined
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentcli-trust-status-'))
})
afterEach(async () => {
  await upstream?.close()
  upstream = undefined
  rmSync(dir, { recursive: true, force: true })
})

const signedExpiry = (json: string) => Date.parse((JSON.parse(json) as { signed: { expires: string } }).signed.expires)

describe('trustRootReport: the trusted root the next update verifies against, its age and expiry', () => {
  it('a pinned root: its file, its age, no TUF expiry', async () => {
    const pinned = join(dir, 'trusted_root.json')
    writeFileSync(pinned, JSON.stringify(ROOT_A))
    const written = Date.now() - 40 * DAY
    utimesSync(pinned, written / 1000, written / 1000)
    const report = await trustRootReport({ pinned, mirror: PUBLIC_GOOD_TUF_MIRROR, tufRoot: null, cacheDir: dir })
    expect(report).toMatchObject({ source: 'pinned', path: pinned, mirror: null, expires_at: null, age_days: 40 })
    expect(Date.parse(report.fetched_at!)).toBeCloseTo(written, -4)
    // A pinned path that is gone is still reported as pinned (the update answers E_CONFIG for it).
    const gone = await trustRootReport({ pinned: join(dir, 'gone.json'), mirror: '', tufRoot: null, cacheDir: dir })
    expect(gone).toMatchObject({ source: 'pinned', fetched_at: null, age_days: null })
  })

  it('before the first refresh: the shipped TUF root it starts from (public-good seed, or the tool’s own)', async () => {
    const seed = await trustRootReport({ pinned: null, mirror: PUBLIC_GOOD_TUF_MIRROR, tufRoot: null, cacheDir: dir })
    const seeds = createRequire(import.meta.url)('@sigstore/tuf/seeds.json') as Record<string, { 'root.json': string }>
    const shipped = Buffer.from(seeds[PUBLIC_GOOD_TUF_MIRROR]!['root.json'], 'base64').toString('utf8')
    expect(seed).toEqual({
      source: 'tuf_seed',
      path: null,
      mirror: PUBLIC_GOOD_TUF_MIRROR,
      fetched_at: null,
      expires_at: new Date(signedExpiry(shipped)).toISOString(),
      offline_until: null,
      age_days: null,
    })
    const repo = createTufRepo(ROOT_A)
    const tufRoot = join(dir, 'tuf-root.json')
    writeFileSync(tufRoot, repo.rootJson)
    const own = await trustRootReport({ pinned: null, mirror: 'https://tuf.example/x', tufRoot, cacheDir: dir })
    expect(own).toMatchObject({ source: 'tuf_seed', expires_at: new Date(signedExpiry(repo.rootJson)).toISOString() })
    // A mirror nothing ships a root for, or a tool root that is not TUF metadata: the expiry is unknown.
    for (const options of [
      { mirror: 'https://unknown.example', tufRoot: null },
      { mirror: 'https://unknown.example', tufRoot: join(dir, 'missing.json') },
    ])
      expect(await trustRootReport({ pinned: null, cacheDir: dir, ...options })).toMatchObject({
        source: 'tuf_seed',
        expires_at: null,
      })
    writeFileSync(tufRoot, '{"signed":{"expires":"not a date"}}')
    expect(await trustRootReport({ pinned: null, mirror: 'https://x.example', tufRoot, cacheDir: dir })).toMatchObject({
      expires_at: null,
    })
  })

  it('after a refresh: the cached copy, when it was fetched, when its root expires, until when it serves offline', async () => {
    const repo = createTufRepo(ROOT_A)
    upstream = await startUpstream(repo.handlers)
    const tufRoot = join(dir, 'tuf-root.json')
    writeFileSync(tufRoot, repo.rootJson)
    const options = { pinned: null, mirror: `${upstream.url}tuf`, tufRoot, cacheDir: join(dir, 'cache') }
    await loadTrustedRoot({ ...options, timeoutMs: 2000 })
    const now = Date.now() + 3 * DAY
    const report = await trustRootReport(options, now)
    const cache = join(options.cacheDir, 'sigstore-tuf')
    const repoDir = join(cache, readdirSync(cache)[0]!)
    expect(report).toMatchObject({
      source: 'tuf_cache',
      path: join(repoDir, 'targets', 'trusted_root.json'),
      mirror: options.mirror,
      // The repository's root expires in a year, its other metadata in 30 days (see tuf-repo.ts).
      expires_at: new Date(signedExpiry(repo.rootJson)).toISOString(),
      age_days: 3,
    })
    const offline = Date.parse(report.offline_until!)
    expect(offline).toBeGreaterThan(Date.now() + 29 * DAY)
    expect(offline).toBeLessThan(Date.parse(report.expires_at!))
    // A cache whose metadata cannot be read is no refreshed copy: reported as not fetched yet.
    writeFileSync(join(repoDir, 'snapshot.json'), '{ truncated')
    expect((await trustRootReport(options)).source).toBe('tuf_seed')
  })

  it('a seeded cache that was never refreshed (root.json alone) is not a fetched copy', async () => {
    const repo = createTufRepo(ROOT_A)
    const mirror = 'https://tuf.example/repo'
    const repoDir = join(dir, 'sigstore-tuf', encodeURIComponent('tuf.example/repo'))
    mkdirSync(repoDir, { recursive: true })
    writeFileSync(join(repoDir, 'root.json'), repo.rootJson)
    const report = await trustRootReport({ pinned: null, mirror, tufRoot: null, cacheDir: dir })
    expect(report).toMatchObject({ source: 'tuf_seed', fetched_at: null })
  })
})
