import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { publicGoodTrustedRoot } from '../../../src/update/public-good.js'
import { expectedIdentity, verifyBundle } from '../../../src/update/signature.js'
import { createAuthority } from '../../support/sigstore.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

let upstream: Upstream
let authority: Awaited<ReturnType<typeof createAuthority>>
let other: Awaited<ReturnType<typeof createAuthority>>
const DATA = Buffer.from('0123abcd  tool-v1.2.3-linux-x64.tar.gz\n')
const ID = expectedIdentity('acme/tool', '.github/workflows/release.yml', 'v1.2.3')
const identity = { subject: ID, issuer: 'https://token.actions.githubusercontent.com' }

beforeAll(async () => {
  upstream = await startUpstream([])
  authority = await createAuthority(`${upstream.url}rekor`)
  other = await createAuthority(`${upstream.url}other`)
  upstream.use(...authority.handlers, ...other.handlers)
})
afterAll(() => upstream.close())

const reason = async (p: Promise<unknown>) => {
  try {
    await p
    return 'verified'
  } catch (error) {
    return (error as { details?: { reason?: string } }).details?.reason ?? String(error)
  }
}

describe('verifyBundle', () => {
  it('builds the expected identity of a tag', () => {
    expect(ID).toBe('https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/v1.2.3')
  })

  it('accepts a bundle from the expected identity and issuer', async () => {
    const bundle = await authority.sign(DATA, ID)
    expect(await verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot })).toEqual({
      subject: ID,
      issuer: identity.issuer,
    })
  })

  it.each([
    [
      'another repository',
      expectedIdentity('evil/tool', '.github/workflows/release.yml', 'v1.2.3'),
      'identity_mismatch',
    ],
    ['another workflow', expectedIdentity('acme/tool', '.github/workflows/other.yml', 'v1.2.3'), 'identity_mismatch'],
    [
      'v1.2.30 when v1.2.3 is expected',
      expectedIdentity('acme/tool', '.github/workflows/release.yml', 'v1.2.30'),
      'identity_mismatch',
    ],
    ['a look-alike where a dot is a wildcard', ID.replace('release.yml', 'releaseXyml'), 'identity_mismatch'],
  ])('refuses a certificate for %s', async (_, subject, expected) => {
    const bundle = await authority.sign(DATA, subject)
    expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot }))).toBe(
      expected,
    )
  })

  it('refuses the wrong issuer', async () => {
    const bundle = await authority.sign(DATA, ID, 'https://accounts.google.com')
    expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot }))).toBe(
      'issuer_mismatch',
    )
  })

  it('refuses a bundle over other bytes', async () => {
    const bundle = await authority.sign(Buffer.from('other bytes\n'), ID)
    expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot }))).toBe(
      'signature_invalid',
    )
  })

  it('refuses a bundle chained to an untrusted root, including the public-good root', async () => {
    const bundle = await other.sign(DATA, ID)
    expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot }))).toBe(
      'root_untrusted',
    )
    const good = await authority.sign(DATA, ID)
    expect(
      await reason(verifyBundle({ bundle: good, artifact: DATA, identity, trustedRoot: publicGoodTrustedRoot() })),
    ).toBe('root_untrusted')
  })

  it('refuses legacy cosign bundles, malformed bundles and a broken root', async () => {
    const legacy = { base64Signature: 'MEUCIQ==', cert: 'LS0t', rekorBundle: {} }
    expect(
      await reason(verifyBundle({ bundle: legacy, artifact: DATA, identity, trustedRoot: authority.trustedRoot })),
    ).toBe('bundle_invalid')
    expect(
      await reason(
        verifyBundle({ bundle: { mediaType: 'nope' }, artifact: DATA, identity, trustedRoot: authority.trustedRoot }),
      ),
    ).toBe('bundle_invalid')
    expect(
      await reason(verifyBundle({ bundle: null, artifact: DATA, identity, trustedRoot: authority.trustedRoot })),
    ).toBe('bundle_invalid')
    const bundle = await authority.sign(DATA, ID)
    expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: { mediaType: 42 } }))).toMatch(
      /root_untrusted|signature_invalid/,
    )
  })

  it('refuses a bundle whose signature was edited', async () => {
    const bundle = (await authority.sign(DATA, ID)) as { messageSignature: { signature: string } }
    const sig = Buffer.from(bundle.messageSignature.signature, 'base64')
    sig.writeUInt8(sig.readUInt8(sig.length - 5) ^ 1, sig.length - 5)
    bundle.messageSignature.signature = sig.toString('base64')
    expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot }))).toBe(
      'signature_invalid',
    )
  })

  it('reads the public-good trusted root offline from @sigstore/tuf', () => {
    expect((publicGoodTrustedRoot() as { mediaType: string }).mediaType).toMatch(/trustedroot/)
  })

  describe('a release signed the way cosign 3.1 signs by default', () => {
    type Cosign3 = {
      mediaType: string
      verificationMaterial: {
        certificate?: unknown
        x509CertificateChain?: unknown
        tlogEntries: Array<{ kindVersion: { kind: string; version: string }; inclusionPromise?: unknown }>
        timestampVerificationData: { rfc3161Timestamps: unknown[] }
      }
    }
    type Root = { tlogs: Array<{ baseUrl: string }>; timestampAuthorities: unknown[] }

    it('verifies: bundle v0.3, a Rekor v2 entry, an RFC 3161 timestamp', async () => {
      const bundle = (await authority.sign(DATA, ID, undefined, 'cosign3')) as Cosign3
      // The shape cosign 3.1 writes, so the test proves what it claims to.
      expect(bundle.mediaType).toBe('application/vnd.dev.sigstore.bundle.v0.3+json')
      expect(bundle.verificationMaterial.certificate).toBeDefined()
      expect(bundle.verificationMaterial.x509CertificateChain).toBeUndefined()
      expect(bundle.verificationMaterial.tlogEntries).toHaveLength(1)
      expect(bundle.verificationMaterial.tlogEntries[0]!.kindVersion).toEqual({
        kind: 'hashedrekord',
        version: '0.0.2',
      })
      expect(bundle.verificationMaterial.tlogEntries[0]!.inclusionPromise).toBeUndefined()
      expect(bundle.verificationMaterial.timestampVerificationData.rfc3161Timestamps).toHaveLength(1)
      expect(await verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot })).toEqual({
        subject: ID,
        issuer: identity.issuer,
      })
    })

    it('refuses it without its timestamp: a Rekor v2 entry proves no time of its own', async () => {
      const bundle = (await authority.sign(DATA, ID, undefined, 'cosign3')) as Cosign3
      bundle.verificationMaterial.timestampVerificationData.rfc3161Timestamps = []
      expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot: authority.trustedRoot }))).toBe(
        'signature_invalid',
      )
    })

    it('refuses it against a root that lacks its timestamp authority or its Rekor v2 log', async () => {
      const bundle = await authority.sign(DATA, ID, undefined, 'cosign3')
      const root = authority.trustedRoot as unknown as Root
      const noTsa = { ...root, timestampAuthorities: [] }
      const noV2 = { ...root, tlogs: root.tlogs.filter((t) => !t.baseUrl.endsWith('-v2')) }
      expect(noV2.tlogs).toHaveLength(1)
      for (const trustedRoot of [noTsa, noV2])
        expect(await reason(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot }))).toBe('signature_invalid')
    })

    it('refuses one from another authority, for another tag or over other bytes', async () => {
      const foreign = await other.sign(DATA, ID, undefined, 'cosign3')
      // Its timestamp is the first thing checked, and no trusted TSA signed it.
      expect(
        await reason(verifyBundle({ bundle: foreign, artifact: DATA, identity, trustedRoot: authority.trustedRoot })),
      ).toMatch(/^(root_untrusted|signature_invalid)$/)
      const later = await authority.sign(DATA, `${ID}0`, undefined, 'cosign3')
      expect(
        await reason(verifyBundle({ bundle: later, artifact: DATA, identity, trustedRoot: authority.trustedRoot })),
      ).toBe('identity_mismatch')
      const bundle = await authority.sign(DATA, ID, undefined, 'cosign3')
      expect(
        await reason(
          verifyBundle({ bundle, artifact: Buffer.from('other\n'), identity, trustedRoot: authority.trustedRoot }),
        ),
      ).toBe('signature_invalid')
    })
  })
})
