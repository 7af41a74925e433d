import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expectedDigest } from '../update/checksums.js'
import { publicGoodTrustedRoot } from '../update/index.js'
import { DEFAULT_NPM_REGISTRY, type VerifiedPackage, verifyNpmProvenance } from '../update/provenance.js'
import { expectedIdentity, verifyBundle } from '../update/signature.js'

/**
 * Check a release directory the way `update --confirm` will: the bundle over `checksums.txt` verifies against
 * the trusted root (the pinned public-good root unless given) for exactly the tag's workflow identity, and every
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
    trustedRoot: options.trustedRoot ? JSON.parse(readFileSync(options.trustedRoot, 'utf8')) : publicGoodTrustedRoot(),
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
export function verifyPublished(options: {
  name: string
  version: string
  repository: string
  workflow: string
  registry?: string | undefined
  trustedRoot?: string | undefined
}): Promise<VerifiedPackage> {
  return verifyNpmProvenance({
    registry: options.registry ?? process.env.npm_config_registry ?? DEFAULT_NPM_REGISTRY,
    name: options.name,
    version: options.version,
    identity: {
      subject: expectedIdentity(options.repository, options.workflow, `v${options.version}`),
      issuer: 'https://token.actions.githubusercontent.com',
    },
    trustedRoot: options.trustedRoot ? JSON.parse(readFileSync(options.trustedRoot, 'utf8')) : publicGoodTrustedRoot(),
  })
}
