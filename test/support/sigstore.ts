import { createHash, generateKeyPairSync } from 'node:crypto'
import { bundleToJSON } from '@sigstore/bundle'
import { initializeCA, initializeCTLog, initializeTLog, rekorHandler } from '@sigstore/mock'
import { HashAlgorithm, PublicKeyDetails, TrustedRoot } from '@sigstore/protobuf-specs'
import { DSSEBundleBuilder, MessageSignatureBundleBuilder, RekorWitness } from '@sigstore/sign'
import { HttpResponse, http } from 'msw'

const ISSUER = 'https://token.actions.githubusercontent.com'
/** A loopback socket can still be reset under load; the log entry is idempotent for a test, so try again. */
const RETRY = { retries: 2, factor: 1, minTimeout: 20, maxTimeout: 100 }

/**
 * A throw-away Sigstore instance for tests: a CA, a CT log and a Rekor whose HTTP side is served by the test's
 * loopback upstream. Bundles minted here pass the production verifier against `trustedRoot` (and fail against
 * any other root, as they must).
 */
export async function createAuthority(rekorBaseUrl: string) {
  const keyPair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const start = new Date(Date.now() - 60_000)
  const ctlog = await initializeCTLog(keyPair)
  const ca = await initializeCA(keyPair, ctlog)
  const tlog = await initializeTLog(rekorBaseUrl, keyPair)
  const rekor = rekorHandler(tlog)
  const key = (raw: Buffer) => ({
    baseUrl: rekorBaseUrl,
    hashAlgorithm: HashAlgorithm.SHA2_256,
    logId: { keyId: createHash('sha256').update(raw).digest() },
    publicKey: { rawBytes: raw, keyDetails: PublicKeyDetails.PKIX_ECDSA_P256_SHA_256, validFor: { start } },
  })
  const trustedRoot = TrustedRoot.toJSON({
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    certificateAuthorities: [
      {
        subject: { organization: 'test', commonName: 'test' },
        uri: '',
        certChain: {
          certificates: [
            {
              rawBytes: Buffer.from(
                ca.rootCertificate.buffer,
                ca.rootCertificate.byteOffset,
                ca.rootCertificate.byteLength,
              ),
            },
          ],
        },
        validFor: { start },
      },
    ],
    tlogs: [key(tlog.publicKey)],
    ctlogs: [key(ctlog.publicKey)],
    timestampAuthorities: [],
  } as unknown as Parameters<typeof TrustedRoot.toJSON>[0])
  const handler = http.post(`*${rekor.path}`, async ({ request }) => {
    const result = await rekor.fn(await request.text())
    return new HttpResponse(result.response as string, {
      status: result.statusCode,
      headers: { 'content-type': 'application/json' },
    })
  })
  /** A bundle over `data` for `subject`; `dsse` signs `data` as an in-toto statement (an attestation) instead. */
  async function sign(
    data: Buffer,
    subject: string,
    issuer = ISSUER,
    kind: 'message' | 'dsse' = 'message',
  ): Promise<unknown> {
    const signer = {
      async sign(payload: Buffer) {
        const eph = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
        const der = await ca.issueCertificate({
          publicKey: eph.publicKey.export({ type: 'spki', format: 'der' }),
          subjectAltName: subject,
          extensions: [
            { oid: '1.3.6.1.4.1.57264.1.1', value: issuer, legacy: true },
            { oid: '1.3.6.1.4.1.57264.1.8', value: issuer },
          ],
        })
        const pem = `-----BEGIN CERTIFICATE-----\n${Buffer.from(der.buffer, der.byteOffset, der.byteLength)
          .toString('base64')
          .match(/.{1,64}/g)!
          .join('\n')}\n-----END CERTIFICATE-----\n`
        const { sign: signData } = await import('node:crypto')
        return {
          signature: signData('sha256', payload, eph.privateKey),
          key: { $case: 'x509Certificate' as const, certificate: pem },
        }
      },
    }
    if (kind === 'dsse') {
      const dsse = new DSSEBundleBuilder({
        signer,
        witnesses: [
          new RekorWitness({
            rekorBaseURL: rekorBaseUrl,
            entryType: 'intoto' as never,
            fetchOnConflict: false,
            retry: RETRY,
          }),
        ],
      })
      return bundleToJSON(await dsse.create({ data, type: 'application/vnd.in-toto+json' }))
    }
    const builder = new MessageSignatureBundleBuilder({
      signer,
      witnesses: [
        new RekorWitness({
          rekorBaseURL: rekorBaseUrl,
          entryType: 'hashedrekord' as never,
          fetchOnConflict: false,
          retry: RETRY,
        }),
      ],
    })
    return bundleToJSON(await builder.create({ data }))
  }
  return { trustedRoot, handler, sign, issuer: ISSUER }
}
