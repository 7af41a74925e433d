import { createHash, generateKeyPairSync, sign as signData } from 'node:crypto'
import { bundleToJSON } from '@sigstore/bundle'
import { initializeCA, initializeCTLog, initializeTLog, initializeTSA, rekorHandler, tsaHandler } from '@sigstore/mock'
import { HashAlgorithm, PublicKeyDetails, TrustedRoot } from '@sigstore/protobuf-specs'
import { DSSEBundleBuilder, MessageSignatureBundleBuilder, RekorWitness, TSAWitness } from '@sigstore/sign'
import { HttpResponse, http } from 'msw'

const ISSUER = 'https://token.actions.githubusercontent.com'
/** A loopback socket can still be reset under load; the log entry is idempotent for a test, so try again. */
const RETRY = { retries: 2, factor: 1, minTimeout: 20, maxTimeout: 100 }

/** How a bundle is made: `message` and `dsse` as @sigstore/sign writes them (v0.2, a Rekor v1 entry). */
export type SignKind = 'message' | 'dsse' | 'cosign3'

const raw = (view: ArrayBufferView) => Buffer.from(view.buffer, view.byteOffset, view.byteLength)

/**
 * A throw-away Sigstore instance for tests: a CA, a CT log, a Rekor v1 log, a Rekor v2 log and an RFC 3161
 * timestamp authority whose HTTP sides are served by the test's loopback upstream under `rekorBaseUrl`. Bundles
 * minted here pass the production verifier against `trustedRoot` (and fail against any other root, as they must).
 */
export async function createAuthority(rekorBaseUrl: string) {
  const keyPair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const start = new Date(Date.now() - 60_000)
  const ctlog = await initializeCTLog(keyPair)
  const ca = await initializeCA(keyPair, ctlog)
  const tlog = await initializeTLog(rekorBaseUrl, keyPair)
  const rekor = rekorHandler(tlog)
  // Rekor v2 has a log key of its own, as the public-good instance does (its shards are separate logs).
  const v2Base = `${rekorBaseUrl}-v2`
  const tlogV2 = await initializeTLog(v2Base, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }))
  // A TSA URL with a path is used as is by @sigstore/sign (the form a signing config gives).
  const tsaUrl = `${rekorBaseUrl}-tsa/api/v1/timestamp`
  // The TSA's clock, set to the whole second before each timestamp: pkijs writes a GeneralizedTime's milliseconds
  // without trailing zeros (".12Z"), which @sigstore/core does not parse (it reads three digits or none).
  const tsaClock = new Date()
  const tsa = await initializeTSA(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }), tsaClock)
  const timestamps = tsaHandler(tsa)
  const key = (rawKey: Buffer, baseUrl = rekorBaseUrl) => ({
    baseUrl,
    hashAlgorithm: HashAlgorithm.SHA2_256,
    logId: { keyId: createHash('sha256').update(rawKey).digest() },
    publicKey: { rawBytes: rawKey, keyDetails: PublicKeyDetails.PKIX_ECDSA_P256_SHA_256, validFor: { start } },
  })
  const trustedRoot = TrustedRoot.toJSON({
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    certificateAuthorities: [
      {
        subject: { organization: 'test', commonName: 'test' },
        uri: '',
        certChain: { certificates: [{ rawBytes: raw(ca.rootCertificate) }] },
        validFor: { start },
      },
    ],
    tlogs: [key(tlog.publicKey), key(tlogV2.publicKey, v2Base)],
    ctlogs: [key(ctlog.publicKey)],
    timestampAuthorities: [
      {
        subject: { organization: 'sigstore.mock', commonName: 'tsa' },
        uri: tsaUrl,
        certChain: { certificates: [{ rawBytes: raw(tsa.intCertificate) }, { rawBytes: raw(tsa.rootCertificate) }] },
        validFor: { start },
      },
    ],
  } as unknown as Parameters<typeof TrustedRoot.toJSON>[0])
  const serve = (url: string, fn: (body: string) => Promise<{ statusCode: number; response: unknown }>) =>
    http.post(url, async ({ request }) => {
      const result = await fn(await request.text())
      const body = typeof result.response === 'string' ? result.response : raw(result.response as ArrayBufferView)
      return new HttpResponse(body, { status: result.statusCode })
    })
  const handler = http.post(`*${rekor.path}`, async ({ request }) => {
    const result = await rekor.fn(await request.text())
    return new HttpResponse(result.response as string, {
      status: result.statusCode,
      headers: { 'content-type': 'application/json' },
    })
  })
  // Served under this authority's own base URLs: another authority's Rekor v2 and TSA stay its own.
  const handlers = [
    handler,
    serve(`${v2Base}/api/v2/log/entries`, async (body) => {
      // What Rekor v2 logs for a hashedrekord request is an Entry (apiVersion 0.0.2, `spec.hashedRekordV002`),
      // not the request: @sigstore/mock 0.13's rekorV2Handler logs the request itself and numbers the leaf
      // outside its one-leaf tree, so its entries cannot verify. The entry is logged through the mock's log
      // instead (its inclusion proof and signed checkpoint are the mock's), and answered in Rekor v2's shape:
      // no SET, no integrated time (time comes from the TSA).
      const request = JSON.parse(body).hashedRekordRequestV002 as { digest: string; signature: unknown }
      const entry = {
        apiVersion: '0.0.2',
        kind: 'hashedrekord',
        spec: {
          hashedRekordV002: { data: { algorithm: 'SHA2_256', digest: request.digest }, signature: request.signature },
        },
      }
      const logged = Object.values(await tlogV2.log(entry))[0] as {
        body: string
        logID: string
        verification: { inclusionProof: { logIndex: number; treeSize: number; rootHash: string; checkpoint: string } }
      }
      const proof = logged.verification.inclusionProof
      return {
        statusCode: 201,
        response: JSON.stringify({
          logIndex: String(proof.logIndex),
          logId: { keyId: Buffer.from(logged.logID, 'hex').toString('base64') },
          kindVersion: { kind: 'hashedrekord', version: '0.0.2' },
          inclusionProof: {
            logIndex: String(proof.logIndex),
            rootHash: Buffer.from(proof.rootHash, 'hex').toString('base64'),
            treeSize: String(proof.treeSize),
            hashes: [],
            checkpoint: { envelope: proof.checkpoint },
          },
          canonicalizedBody: logged.body,
        }),
      }
    }),
    serve(tsaUrl, (body) => {
      tsaClock.setTime(Math.floor(Date.now() / 1000) * 1000)
      return timestamps.fn(body)
    }),
  ]
  /**
   * A bundle over `data` for `subject`. `message`: a message signature as @sigstore/sign writes it (v0.2, the
   * certificate chain, a Rekor v1 entry with its SET). `dsse`: `data` signed as an in-toto statement (an
   * attestation). `cosign3`: what `cosign sign-blob --bundle` writes by default since cosign 3.1 — a v0.3 bundle
   * (the leaf certificate alone), a Rekor v2 entry (an inclusion proof and a signed checkpoint, no SET, no
   * integrated time to trust) and an RFC 3161 timestamp from the timestamp authority, the only time it proves.
   */
  async function sign(data: Buffer, subject: string, issuer = ISSUER, kind: SignKind = 'message'): Promise<unknown> {
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
        const pem = `-----BEGIN CERTIFICATE-----\n${raw(der)
          .toString('base64')
          .match(/.{1,64}/g)!
          .join('\n')}\n-----END CERTIFICATE-----\n`
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
    if (kind === 'cosign3') {
      const builder = new MessageSignatureBundleBuilder({
        signer,
        witnesses: [
          new RekorWitness({ rekorBaseURL: v2Base, majorApiVersion: 2, fetchOnConflict: false, retry: RETRY }),
          new TSAWitness({ tsaBaseURL: tsaUrl, retry: RETRY }),
        ],
      })
      return asV03(bundleToJSON(await builder.create({ data })))
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
  return { trustedRoot, handler, handlers, sign, issuer: ISSUER }
}

/**
 * @sigstore/sign writes message signatures as v0.2 bundles (a certificate chain); cosign 3 writes v0.3 (the leaf
 * certificate alone). Same signature, same log entry: only the envelope's shape differs.
 */
export function asV03(bundle: unknown): Record<string, unknown> {
  const b = bundle as { verificationMaterial: { x509CertificateChain?: { certificates: Array<{ rawBytes: string }> } } }
  const { x509CertificateChain, ...material } = b.verificationMaterial
  return {
    ...b,
    mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
    verificationMaterial: { ...material, certificate: x509CertificateChain!.certificates[0] },
  }
}
