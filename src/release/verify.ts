import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expectedDigest } from '../update/checksums.js'
import { DEFAULT_NPM_REGISTRY, type VerifiedPackage, verifyNpmProvenance } from '../update/provenance.js'
import { PUBLIC_GOOD_TUF_MIRROR } from '../update/settings.js'
import { expectedIdentity, verifyBundle } from '../update/signature.js'
import { loadTrustedRoot } from '../update/trust-root.js'

/**
 * Check a release directory the way `update --confirm` will: the bundle over `checksums.txt` verifies against
 * the trusted root (the public-good root refreshed through TUF unless a file is given) for exactly the tag's workflow identity, and every
 * archive's SHA-256 is its line. Run by the release workflow before anything is published.
 */
export async function verifyRelease(options: {
  dir: string
  repository: string
  workflow: string
  tag: string
  issuer?: string
  trustedRoot?: string | undefined
}): Promise<{ identity: string; archives: string[] }> {
  const checksums = readFileSync(join(options.dir, 'checksums.txt'))
  const bundlePath = join(options.dir, 'checksums.txt.sigstore.json')
  if (!existsSync(bundlePath)) throw new Error('checksums.txt.sigstore.json is missing')
  const identity = expectedIdentity(options.repository, options.workflow, options.tag)
  await verifyBundle({
    bundle: JSON.parse(readFileSync(bundlePath, 'utf8')),
    artifact: checksums,
    identity: { subject: identity, issuer: options.issuer ?? 'https://token.actions.githubusercontent.com' },
    trustedRoot: await releaseTrustedRoot(options.trustedRoot),
  })
  const archives = checksums
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(/\s+\*?/)[1]!)
  for (const name of archives) {
    const sha256 = createHash('sha256')
      .update(readFileSync(join(options.dir, name)))
      .digest('hex')
    if (sha256 !== expectedDigest(checksums.toString('utf8'), name))
      throw new Error(`${name} does not match checksums.txt`)
  }
  return { identity, archives }
}

/**
 * Check a package version just published with `--provenance` the way `update` checks an npm install: its SLSA
 * attestation in the registry, signed by this workflow at `v<version>`, about exactly `dist.integrity`.
 */
export async function verifyPublished(options: {
  name: string
  version: string
  repository: string
  workflow: string
  registry?: string | undefined
  trustedRoot?: string | undefined
}): Promise<VerifiedPackage> {
  const trustedRoot = await releaseTrustedRoot(options.trustedRoot)
  return verifyNpmProvenance({
    registry: options.registry ?? process.env.npm_config_registry ?? DEFAULT_NPM_REGISTRY,
    name: options.name,
    version: options.version,
    identity: {
      subject: expectedIdentity(options.repository, options.workflow, `v${options.version}`),
      issuer: 'https://token.actions.githubusercontent.com',
    },
    trustedRoot,
  })
}

/**
 * The root a release is checked against: the given file, else the public-good root refreshed through TUF (as
 * `update` does), so a Sigstore key rotation cannot make the workflow refuse a release that `update` accepts.
 */
async function releaseTrustedRoot(file: string | undefined): Promise<unknown> {
  if (file) return JSON.parse(readFileSync(file, 'utf8'))
  // A TUF cache of this run's own (0700, removed after): under one fixed name in the shared temporary directory, the
  // directory holding the cache could be another local user's, who could swap the cached root after it was checked.
  const cacheDir = await mkdtemp(join(tmpdir(), 'agentcli-release-'))
  try {
    const loaded = await loadTrustedRoot({
      pinned: null,
      mirror: PUBLIC_GOOD_TUF_MIRROR,
      tufRoot: null,
      cacheDir,
      timeoutMs: 30_000,
    })
    return loaded.root
  } finally {
    await rm(cacheDir, { recursive: true, force: true })
  }
}
