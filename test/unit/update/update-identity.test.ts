import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exactSigner, expectedIdentity, releaseIdentity, verifyBundle } from '../../../src/update/signature.js'
import { createAuthority } from '../../support/sigstore.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

let upstream: Upstream
let authority: Awaited<ReturnType<typeof createAuthority>>
const DATA = Buffer.from('0123abcd  tool-v1.2.3-linux-x64.tar.gz\n')
const DECLARED = {
  repository: 'acme/tool',
  workflow: '.github/workflows/release.yml',
  issuer: 'https://token.actions.githubusercontent.com',
  tag_prefix: 'v',
}
const identity = releaseIdentity(DECLARED, '1.2.3')

beforeAll(async () => {
  upstream = await startUpstream([])
  authority = await createAuthority(`${upstream.url}rekor`)
  upstream.use(authority.handler)
})
afterAll(() => upstream.close())

const outcome = async (p: Promise<unknown>) => {
  try {
    return { ok: await p }
  } catch (error) {
    return error as { code: string; message: string; details: { reason: string } }
  }
}
const verifyWith = (bundle: unknown, artifact = DATA) =>
  outcome(verifyBundle({ bundle, artifact, identity, trustedRoot: authority.trustedRoot }))

describe('the identity comes from the version being installed', () => {
  it('builds the tag from the version and the declared prefix, never from a source label', () => {
    expect(identity).toEqual({
      subject: 'https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/v1.2.3',
      issuer: DECLARED.issuer,
    })
    expect(releaseIdentity({ ...DECLARED, tag_prefix: '' }, '1.2.3').subject).toMatch(/@refs\/tags\/1\.2\.3$/)
    expect(expectedIdentity('acme/tool', '/.github/workflows/release.yml', 'v1')).toBe(
      'https://github.com/acme/tool/.github/workflows/release.yml@refs/tags/v1',
    )
  })

  it('a release signed for v1.2.30 does not verify as 1.2.3', async () => {
    const bundle = await authority.sign(DATA, releaseIdentity(DECLARED, '1.2.30').subject)
    expect(await verifyWith(bundle)).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'identity_mismatch' } })
  })

  it('a SAN with a trailing newline or a prefix of the identity is refused', async () => {
    for (const subject of [`${identity.subject}\n`, identity.subject.slice(0, -1), `${identity.subject}0`]) {
      const bundle = await authority.sign(DATA, subject)
      expect(await verifyWith(bundle)).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'identity_mismatch' } })
    }
  })

  it('the exact comparison after the policy refuses any difference, or a missing identity', () => {
    const issuer = identity.issuer
    expect(exactSigner({ subjectAlternativeName: identity.subject, extensions: { issuer } }, identity)).toEqual({
      subject: identity.subject,
      issuer,
    })
    const refuse = (signer: Parameters<typeof exactSigner>[0]) => {
      try {
        exactSigner(signer, identity)
      } catch (error) {
        return (error as { details: { reason: string } }).details.reason
      }
      return 'accepted'
    }
    expect(refuse({ subjectAlternativeName: `${identity.subject}\n`, extensions: { issuer } })).toBe(
      'identity_mismatch',
    )
    expect(refuse({ subjectAlternativeName: identity.subject, extensions: { issuer: `${issuer}/` } })).toBe(
      'identity_mismatch',
    )
    expect(refuse({ subjectAlternativeName: identity.subject })).toBe('identity_mismatch')
    expect(refuse(undefined)).toBe('identity_mismatch')
  })

  it('an issuer other than the declared one is issuer_mismatch, even for a repository named "issuer"', async () => {
    const declared = { ...DECLARED, repository: 'acme/issuer' }
    const id = releaseIdentity(declared, '1.2.3')
    const bundle = await authority.sign(DATA, id.subject, 'https://accounts.google.com')
    const result = await outcome(
      verifyBundle({ bundle, artifact: DATA, identity: id, trustedRoot: authority.trustedRoot }),
    )
    expect(result).toMatchObject({ details: { reason: 'issuer_mismatch' } })
    const wrongRepo = await authority.sign(
      DATA,
      releaseIdentity({ ...declared, repository: 'acme/other' }, '1.2.3').subject,
    )
    expect(
      await outcome(
        verifyBundle({ bundle: wrongRepo, artifact: DATA, identity: id, trustedRoot: authority.trustedRoot }),
      ),
    ).toMatchObject({ details: { reason: 'identity_mismatch' } })
  })
})

describe('malformed bundles are E_INTEGRITY bundle_invalid, never E_INTERNAL', () => {
  it.each([
    ['text', 'not json at all'],
    ['a number', 42],
    ['null', null],
    ['an array', []],
    ['an empty object', {}],
    ['a wrong media type', { mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json', verificationMaterial: 7 }],
    [
      'a certificate that is a number (the parser throws a TypeError)',
      {
        mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
        verificationMaterial: { certificate: { rawBytes: 5 } },
        messageSignature: { signature: 'AA==' },
      },
    ],
    [
      'a null log entry',
      { mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json', verificationMaterial: { tlogEntries: [null] } },
    ],
  ])('%s', async (_, bundle) => {
    const result = await verifyWith(bundle)
    expect(result).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'bundle_invalid' } })
  })

  it('a legacy cosign bundle says so', async () => {
    expect(await verifyWith({ base64Signature: 'MEUCIQ==', cert: 'LS0t' })).toMatchObject({
      details: { reason: 'bundle_invalid', legacy: true },
    })
  })

  it('garbage certificate bytes fail closed as signature_invalid', async () => {
    const bundle = structuredClone(await authority.sign(DATA, identity.subject)) as {
      verificationMaterial: {
        certificate?: { rawBytes: string }
        x509CertificateChain?: { certificates: Array<{ rawBytes: string }> }
      }
    }
    const garbage = Buffer.from('not a certificate').toString('base64')
    if (bundle.verificationMaterial.certificate) bundle.verificationMaterial.certificate.rawBytes = garbage
    else bundle.verificationMaterial.x509CertificateChain!.certificates[0]!.rawBytes = garbage
    expect(await verifyWith(bundle)).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'signature_invalid' } })
  })

  it.each([
    ['has the wrong shape', { certificateAuthorities: 'nope' }],
    ['is null', null],
    [
      'holds a key that is not one',
      { tlogs: [{ logId: { keyId: 'AA==' }, publicKey: { rawBytes: 'AAAA', keyDetails: 'PKIX_ECDSA_P256_SHA_256' } }] },
    ],
  ])('a trusted root that %s is root_untrusted', async (_, trustedRoot) => {
    const bundle = await authority.sign(DATA, identity.subject)
    const result = await outcome(verifyBundle({ bundle, artifact: DATA, identity, trustedRoot }))
    expect(result).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'root_untrusted' } })
  })
})

describe('attestation (DSSE) bundles must name the checksums file as their subject', () => {
  const statement = (subject: unknown) =>
    Buffer.from(
      JSON.stringify({ _type: 'https://in-toto.io/Statement/v1', subject, predicateType: 'x', predicate: {} }),
    )
  const sha = createHash('sha256').update(DATA).digest('hex')

  it('accepts one whose subject digest is the checksums file', async () => {
    const bundle = await authority.sign(
      statement([{ name: 'checksums.txt', digest: { sha256: sha } }]),
      identity.subject,
      undefined,
      'dsse',
    )
    expect(await verifyWith(bundle)).toEqual({ ok: { subject: identity.subject, issuer: identity.issuer } })
  })

  it.each([
    ['another digest', statement([{ name: 'checksums.txt', digest: { sha256: 'ab'.repeat(32) } }])],
    ['no digest', statement([{ name: 'checksums.txt' }])],
    ['no subject at all', statement(undefined)],
    ['a payload that is not JSON', Buffer.from('plain text')],
  ])('refuses one with %s', async (_, payload) => {
    const bundle = await authority.sign(payload, identity.subject, undefined, 'dsse')
    expect(await verifyWith(bundle)).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'signature_invalid' } })
  })
})
