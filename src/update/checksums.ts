import { integrityError } from './errors.js'
import type { Asset, Release } from './source.js'

/** The checksums file and its bundle, under either naming convention goreleaser uses. */
export function findChecksumAssets(
  release: Release,
  tool: string,
): { checksums: Asset; bundle: Asset | undefined } | undefined {
  const names = ['checksums.txt', `${tool}_${release.version}_checksums.txt`]
  for (const name of names) {
    const checksums = release.assets.find((a) => a.name === name)
    if (checksums) return { checksums, bundle: release.assets.find((a) => a.name === `${name}.sigstore.json`) }
  }
  return undefined
}

/** The expected SHA-256 of `asset` according to a checksums file (`<hex>  <name>` or `<hex> *<name>`). */
export function expectedDigest(checksums: string, asset: string): string {
  for (const line of checksums.split('\n')) {
    const match = /^([0-9a-f]{64})\s+\*?(.+?)\s*$/i.exec(line.trim())
    if (match && match[2] === asset) return match[1]!.toLowerCase()
  }
  throw integrityError('checksum_missing', `checksums.txt has no entry for ${asset}`, { asset })
}

/** The release tarball for this platform (oclif pack layout: `<bin>-v<version>[-<sha>]-<platform>-<arch>.tar.gz`). */
export function findTarball(
  release: Release,
  tool: string,
  platform = process.platform,
  arch = process.arch,
): Asset | undefined {
  const escaped = tool.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const pattern = new RegExp(
    `^${escaped}-v${release.version.replace(/\./g, '\\.')}(-[0-9a-f]{7,40})?-${platform}-${arch}\\.tar\\.gz$`,
  )
  return release.assets.find((a) => pattern.test(a.name))
}
