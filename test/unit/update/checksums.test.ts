import { describe, expect, it } from 'vitest'
import { expectedDigest, findChecksumAssets, findTarball } from '../../../src/update/checksums.js'
import type { Release } from '../../../src/update/source.js'

const release = (names: string[]): Release => ({
  version: '1.2.3',
  tag: 'v1.2.3',
  url: null,
  notes: '',
  prerelease: false,
  assets: names.map((name) => ({ name, url: `https://x/${name}` })),
})
const HEX = 'ab'.repeat(32)

describe('release assets', () => {
  it('finds checksums.txt and its bundle, or the goreleaser-style name', () => {
    expect(findChecksumAssets(release(['checksums.txt', 'checksums.txt.sigstore.json']), 'tool')).toMatchObject({
      checksums: { name: 'checksums.txt' },
      bundle: { name: 'checksums.txt.sigstore.json' },
    })
    expect(
      findChecksumAssets(release(['tool_1.2.3_checksums.txt', 'tool_1.2.3_checksums.txt.sigstore.json']), 'tool'),
    ).toMatchObject({
      checksums: { name: 'tool_1.2.3_checksums.txt' },
      bundle: { name: 'tool_1.2.3_checksums.txt.sigstore.json' },
    })
    expect(findChecksumAssets(release(['checksums.txt']), 'tool')?.bundle).toBeUndefined()
    expect(findChecksumAssets(release(['tool_9.9.9_checksums.txt']), 'tool')).toBeUndefined()
  })

  it('finds the tarball for this platform, with or without a commit sha, and not for another version', () => {
    const mine = `tool-v1.2.3-${process.platform}-${process.arch}.tar.gz`
    const withSha = `tool-v1.2.3-abc1234-${process.platform}-${process.arch}.tar.gz`
    expect(findTarball(release([mine]), 'tool')?.name).toBe(mine)
    expect(findTarball(release([withSha]), 'tool')?.name).toBe(withSha)
    expect(findTarball(release([`tool-v1.2.30-${process.platform}-${process.arch}.tar.gz`]), 'tool')).toBeUndefined()
    expect(findTarball(release([`tool-v1.2.3-plan9-mips.tar.gz`]), 'tool')).toBeUndefined()
  })

  it('reads sha256sum lines, text or binary mode, and refuses a missing entry', () => {
    expect(expectedDigest(`${HEX}  tool.tar.gz\n`, 'tool.tar.gz')).toBe(HEX)
    expect(expectedDigest(`${'cd'.repeat(32)}  other\n${HEX.toUpperCase()} *tool.tar.gz\n`, 'tool.tar.gz')).toBe(HEX)
    expect(() => expectedDigest(`${HEX}  tool.tar.gz.sig\n`, 'tool.tar.gz')).toThrow(/no entry/)
    let caught: unknown
    try {
      expectedDigest('garbage', 'tool.tar.gz')
    } catch (error) {
      caught = error
    }
    expect(caught).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'checksum_missing' } })
  })
})
