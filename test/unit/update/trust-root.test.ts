import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  isOwnTree,
  isUnreachable,
  loadTrustedRoot,
  readTrustFile,
  type TrustRootOptions,
} from '../../../src/update/trust-root.js'
import { createTufRepo, type TufFaults } from '../../support/tuf-repo.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

const ROOT_A = { mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1', tlogs: [], ctlogs: [] }
const ROOT_B = { ...ROOT_A, certificateAuthorities: [] as unknown[], timestampAuthorities: [] as unknown[] }

let dir: string
let upstreams: Upstream[] = []
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentcli-trust-'))
})
afterEach(async () => {
  for (const u of upstreams) await u.close().catch(() => undefined)
  upstreams = []
  rmSync(dir, { recursive: true, force: true })
})

/** A TUF repository on a loopback port, and the options a tool that ships its root.json would pass. */
async function serve(root: unknown = ROOT_A, faults?: TufFaults) {
  const repo = createTufRepo(root)
  if (faults) repo.republish(root, faults)
  const upstream = await startUpstream(repo.handlers)
  upstreams.push(upstream)
  const tufRoot = join(dir, 'tuf-root.json')
  writeFileSync(tufRoot, repo.rootJson)
  const options: TrustRootOptions = {
    pinned: null,
    mirror: `${upstream.url}tuf`,
    tufRoot,
    cacheDir: join(dir, 'cache'),
    timeoutMs: 2000,
  }
  return { repo, upstream, options }
}

const failure = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (error) {
    return error as { code: string; message: string; details: Record<string, unknown> }
  }
  throw new Error('expected a failure')
}

/** Normalise a trusted root through the same protobuf round trip loadTrustedRoot applies. */
const viaProto = async (root: unknown) => {
  const { TrustedRoot } = await import('@sigstore/protobuf-specs')
  return TrustedRoot.toJSON(TrustedRoot.fromJSON(root))
}

describe('loadTrustedRoot through TUF', () => {
  it('fetches a fresh root, verified from the shipped TUF root', async () => {
    const { options, repo } = await serve()
    const loaded = await loadTrustedRoot(options)
    expect(loaded).toEqual({ root: await viaProto(ROOT_A), source: 'tuf' })
    expect(repo.requests).toEqual(
      expect.arrayContaining(['timestamp.json', 'snapshot.json', 'targets.json', 'targets/trusted_root.json']),
    )
  })

  it('follows a rotation upstream without a new release of the tool', async () => {
    const { options, repo } = await serve()
    await loadTrustedRoot(options)
    repo.republish(ROOT_B)
    expect(await loadTrustedRoot(options)).toEqual({ root: await viaProto(ROOT_B), source: 'tuf' })
  })

  it('offline, falls back to the copy TUF verified earlier', async () => {
    const { options, upstream } = await serve()
    await loadTrustedRoot(options)
    await upstream.close()
    expect(await loadTrustedRoot(options)).toEqual({ root: await viaProto(ROOT_A), source: 'tuf_cache' })
  })

  it('offline with nothing cached is E_NETWORK trust_root_unavailable, never an unverified root', async () => {
    const { options, upstream } = await serve()
    await upstream.close()
    const error = await failure(loadTrustedRoot(options))
    expect(error).toMatchObject({
      code: 'E_NETWORK',
      details: { reason: 'trust_root_unavailable', host: new URL(upstream.url).host, stage: 'verify_signature' },
    })
    expect(error.details.hint).toMatch(/must be reachable once/)
  })

  it.each([
    [
      'a target that does not match its signed hash',
      { tamperTarget: true },
      /error downloading target.*(length|hash)/i,
    ],
    [
      'timestamp metadata signed by a key the root does not list',
      { foreignTimestampKey: true },
      /timestamp was signed by 0\/1 keys/,
    ],
    ['expired metadata', { expired: true }, /expired/],
    ['a root rotation signed only by a rogue key', { rogueRootRotation: true }, /root was signed by 0\/1 keys/],
  ])('refuses %s: E_INTEGRITY root_untrusted (fail closed)', async (_, faults: TufFaults, why: RegExp) => {
    const { options } = await serve(ROOT_A, faults)
    const error = await failure(loadTrustedRoot(options))
    expect(error).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'root_untrusted', mirror: options.mirror } })
    expect(error.message).toMatch(why)
  })

  it('refuses a tampered refresh even with a good copy cached: a mirror that lies is not "offline"', async () => {
    const { options, repo } = await serve()
    await loadTrustedRoot(options)
    repo.republish(ROOT_B, { tamperTarget: true })
    expect(await failure(loadTrustedRoot(options))).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'root_untrusted' },
    })
  })

  it('a corrupt local cache is started over from the shipped TUF root', async () => {
    const { options } = await serve()
    await loadTrustedRoot(options)
    const cache = join(options.cacheDir, 'sigstore-tuf')
    const repoDir = join(cache, readdirSync(cache)[0]!)
    writeFileSync(join(repoDir, 'root.json'), '{ truncated')
    expect(await loadTrustedRoot(options)).toEqual({ root: await viaProto(ROOT_A), source: 'tuf' })
  })

  it('a corrupt local cache and then no network is E_NETWORK; and then a lying mirror is E_INTEGRITY', async () => {
    const offline = await serve()
    await loadTrustedRoot(offline.options)
    const corrupt = (o: TrustRootOptions) => {
      const cache = join(o.cacheDir, 'sigstore-tuf')
      for (const name of readdirSync(cache)) writeFileSync(join(cache, name, 'root.json'), 'garbage')
    }
    corrupt(offline.options)
    await offline.upstream.close()
    expect(await failure(loadTrustedRoot(offline.options))).toMatchObject({ code: 'E_NETWORK' })

    const lying = await serve(ROOT_A, { foreignTimestampKey: true })
    const options = { ...lying.options, cacheDir: join(dir, 'cache2') }
    mkdirSync(join(options.cacheDir, 'sigstore-tuf', encodeURIComponent(new URL(options.mirror).host + '/tuf')), {
      recursive: true,
    })
    corrupt(options)
    expect(await failure(loadTrustedRoot(options))).toMatchObject({ code: 'E_INTEGRITY' })
  })

  it('the cache is left 0700/0600 whatever the umask, and a cache others could write is never trusted', async () => {
    const { options, upstream } = await serve()
    const old = process.umask(0o000)
    try {
      await loadTrustedRoot(options)
    } finally {
      process.umask(old)
    }
    const cache = join(options.cacheDir, 'sigstore-tuf')
    const repoDir = join(cache, readdirSync(cache)[0]!)
    expect(statSync(cache).mode & 0o777).toBe(0o700)
    expect(statSync(join(repoDir, 'root.json')).mode & 0o777).toBe(0o600)
    // An attacker who could write the cache plants metadata of their own repository, then the mirror goes away.
    const evil = await serve({ ...ROOT_A, tlogs: [{ baseUrl: 'https://evil.example' }] })
    const planted = { ...evil.options, cacheDir: join(dir, 'planted') }
    await loadTrustedRoot(planted)
    const plantedRepo = join(planted.cacheDir, 'sigstore-tuf', readdirSync(join(planted.cacheDir, 'sigstore-tuf'))[0]!)
    for (const name of ['root.json', 'timestamp.json', 'snapshot.json', 'targets.json'])
      writeFileSync(join(repoDir, name), readFileSync(join(plantedRepo, name)))
    writeFileSync(
      join(repoDir, 'targets', 'trusted_root.json'),
      readFileSync(join(plantedRepo, 'targets', 'trusted_root.json')),
    )
    chmodSync(join(repoDir, 'root.json'), 0o666)
    await upstream.close()
    expect(await failure(loadTrustedRoot(options))).toMatchObject({ code: 'E_NETWORK' })
  })

  it('isOwnTree: a symlink, a group/other-writable entry or another owner is not own; a missing path is', async () => {
    const tree = join(dir, 'tree')
    mkdirSync(join(tree, 'sub'), { recursive: true, mode: 0o700 })
    writeFileSync(join(tree, 'sub', 'f'), 'x', { mode: 0o600 })
    const uid = process.getuid?.()
    expect(await isOwnTree(tree, uid)).toBe(true)
    expect(await isOwnTree(join(dir, 'absent'), uid)).toBe(true)
    expect(await isOwnTree(tree, (uid ?? 0) + 1)).toBe(false)
    chmodSync(join(tree, 'sub', 'f'), 0o620)
    expect(await isOwnTree(tree, uid)).toBe(false)
    chmodSync(join(tree, 'sub', 'f'), 0o600)
    symlinkSync('/etc', join(tree, 'link'))
    expect(await isOwnTree(tree, uid)).toBe(false)
  })

  it('a mirror with no known TUF root is E_CONFIG', async () => {
    const { options } = await serve()
    const error = await failure(loadTrustedRoot({ ...options, tufRoot: null }))
    expect(error).toMatchObject({ code: 'E_CONFIG' })
    expect(String(error.details.fix)).toContain('tuf_root')
  })
})

describe('trust files a tool ships', () => {
  it('uses a pinned trusted root as is', async () => {
    const pinned = join(dir, 'trusted_root.json')
    writeFileSync(pinned, JSON.stringify(ROOT_A))
    expect(
      await loadTrustedRoot({ pinned, mirror: 'http://127.0.0.1:9/', tufRoot: null, cacheDir: dir, timeoutMs: 500 }),
    ).toEqual({
      root: ROOT_A,
      source: 'pinned',
    })
  })

  it.each([
    ['missing', null, /cannot read it \(ENOENT\)/],
    ['not JSON', '{ nope', /not JSON/],
    ['null', 'null', /not a Sigstore trusted root/],
    [
      'another kind of JSON',
      '{"mediaType": "application/vnd.dev.sigstore.bundle+json"}',
      /not a Sigstore trusted root/,
    ],
  ])('a pinned root that is %s is E_CONFIG naming the file', async (_, content, message) => {
    const pinned = join(dir, 'trusted_root.json')
    if (content !== null) writeFileSync(pinned, content)
    const error = await failure(
      loadTrustedRoot({ pinned, mirror: 'http://127.0.0.1:9/', tufRoot: null, cacheDir: dir, timeoutMs: 500 }),
    )
    expect(error).toMatchObject({ code: 'E_CONFIG', details: { path: pinned, stage: 'verify_signature' } })
    expect(error.message).toMatch(message)
  })

  it('a shipped TUF root that is broken is E_CONFIG before any request', async () => {
    const tufRoot = join(dir, 'root.json')
    writeFileSync(tufRoot, '[]')
    const error = await failure(
      loadTrustedRoot({ pinned: null, mirror: 'http://127.0.0.1:9/', tufRoot, cacheDir: dir, timeoutMs: 500 }),
    )
    expect(error).toMatchObject({ code: 'E_CONFIG', details: { path: tufRoot } })
  })

  it('reads a TUF root by its signed _type', async () => {
    const tufRoot = join(dir, 'root.json')
    writeFileSync(tufRoot, JSON.stringify({ signed: { _type: 'root' }, signatures: [] }))
    expect(await readTrustFile(tufRoot, /\broot\b/)).toMatchObject({ signed: { _type: 'root' } })
  })
})

describe('isUnreachable', () => {
  it('looks along the cause chain for a network failure, and only there', () => {
    const wrapped = new Error('error refreshing TUF metadata', {
      cause: new Error(
        'Unable to load snapshot metadata error FetchError: request failed, reason: connect ECONNREFUSED',
      ),
    })
    expect(isUnreachable(wrapped)).toBe(true)
    expect(isUnreachable(Object.assign(new Error('x'), { code: 'ENOTFOUND' }))).toBe(true)
    expect(isUnreachable(new Error('Final timestamp.json is expired'))).toBe(false)
    expect(isUnreachable(undefined)).toBe(false)
    let deep: Error = new Error('ECONNRESET')
    for (let i = 0; i < 10; i++) deep = new Error('wrapped', { cause: deep })
    expect(isUnreachable(deep)).toBe(false)
  })
})
