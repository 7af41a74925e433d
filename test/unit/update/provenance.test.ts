import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HttpResponse, http } from 'msw'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  downloadVerifiedTarball,
  npmPurl,
  SLSA_PROVENANCE_V1,
  SLSA_PROVENANCE_V02,
  verifyNpmProvenance,
} from '../../../src/update/provenance.js'
import { expectedIdentity } from '../../../src/update/signature.js'
import { attest } from '../../support/attest.js'
import { createAuthority } from '../../support/sigstore.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

// verifyNpmProvenance in-process against a loopback registry: the shapes a hostile or broken registry can
// answer with, each refused with its own reason (the command-level cases are in provenance.test.ts).

const NAME = '@acme/tool'
const VERSION = '1.2.3'
const TARBALL = Buffer.from('the tarball')
const DIGEST = createHash('sha512').update(TARBALL).digest()
const SUBJECT = expectedIdentity('acme/tool', '.github/workflows/release.yml', 'v1.2.3')

let registry: Upstream
let authority: Awaited<ReturnType<typeof createAuthority>>

const statement = (name = npmPurl(NAME, VERSION)) => ({
  _type: 'https://in-toto.io/Statement/v1',
  subject: [{ name, digest: { sha512: DIGEST.toString('hex') } }],
  predicateType: SLSA_PROVENANCE_V1,
  predicate: {},
})

function serve(options: { packument?: unknown; attestations?: unknown; raw?: string }) {
  registry.use(
    http.get('*/@acme%2ftool', () =>
      options.raw !== undefined
        ? new HttpResponse(options.raw)
        : HttpResponse.json(
            (options.packument ?? {
              versions: {
                [VERSION]: {
                  dist: {
                    integrity: `sha512-${DIGEST.toString('base64')}`,
                    tarball: `${registry.url}t.tgz`,
                  },
                },
              },
            }) as Record<string, unknown>,
          ),
    ),
    http.get('*/-/npm/v1/attestations/@acme%2ftool@1.2.3', () =>
      HttpResponse.json(options.attestations as Record<string, unknown>),
    ),
  )
}

const verify = () =>
  verifyNpmProvenance({
    registry: registry.url,
    name: NAME,
    version: VERSION,
    identity: { subject: SUBJECT, issuer: authority.issuer },
    trustedRoot: authority.trustedRoot,
  })

const failure = async () => {
  try {
    await verify()
    return 'verified'
  } catch (error) {
    const e = error as { code?: string; details?: { reason?: string } }
    return `${e.code}${e.details?.reason ? `/${e.details.reason}` : ''}`
  }
}

beforeAll(async () => {
  registry = await startUpstream([])
  authority = await createAuthority(`${registry.url}rekor`)
})
afterAll(() => registry.close())
beforeEach(() => {
  registry.reset()
  registry.use(authority.handler)
})

describe('verifyNpmProvenance', () => {
  it('names a scoped package as npm does, in the purl and in the registry paths', async () => {
    expect(npmPurl('@acme/tool', '1.2.3')).toBe('pkg:npm/%40acme/tool@1.2.3')
    expect(npmPurl('tool', '1.2.3')).toBe('pkg:npm/tool@1.2.3')
    serve({
      attestations: {
        attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle: await attest(authority, statement(), SUBJECT) }],
      },
    })
    expect(await verify()).toMatchObject({
      name: NAME,
      version: VERSION,
      sha512: DIGEST.toString('hex'),
      tarball: `${registry.url}t.tgz`,
      signed_by: SUBJECT,
    })
  })

  it('refuses an attestation about the unscoped look-alike', async () => {
    serve({
      attestations: {
        attestations: [
          {
            predicateType: SLSA_PROVENANCE_V1,
            bundle: await attest(authority, statement('pkg:npm/tool@1.2.3'), SUBJECT),
          },
        ],
      },
    })
    expect(await failure()).toBe('E_INTEGRITY/signature_invalid')
  })

  it('refuses a message signature (not an in-toto statement) in the provenance slot', async () => {
    const bundle = await authority.sign(TARBALL, SUBJECT)
    serve({ attestations: { attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle }] } })
    expect(await failure()).toBe('E_INTEGRITY/bundle_invalid')
  })

  it('accepts the SLSA v0.2 provenance earlier npm releases carry, held to the same identity, purl and digest', async () => {
    const v02 = {
      ...statement(),
      _type: 'https://in-toto.io/Statement/v0.1',
      predicateType: SLSA_PROVENANCE_V02,
      predicate: {
        builder: { id: 'https://github.com/actions/runner' },
        buildType: 'https://github.com/npm/cli/gha/v2',
      },
    }
    serve({
      attestations: {
        attestations: [{ predicateType: SLSA_PROVENANCE_V02, bundle: await attest(authority, v02, SUBJECT) }],
      },
    })
    expect(await verify()).toMatchObject({ sha512: DIGEST.toString('hex'), signed_by: SUBJECT })
    // Listed as v0.2 but a v1 statement inside (or the reverse): the listing and the signed statement disagree.
    serve({
      attestations: {
        attestations: [{ predicateType: SLSA_PROVENANCE_V02, bundle: await attest(authority, statement(), SUBJECT) }],
      },
    })
    expect(await failure()).toBe('E_INTEGRITY/bundle_invalid')
    // A v0.2 statement about the look-alike, or signed by a foreign workflow, is refused as a v1 one would be.
    const lookAlike = { ...v02, subject: [{ name: 'pkg:npm/tool@1.2.3', digest: { sha512: DIGEST.toString('hex') } }] }
    serve({
      attestations: {
        attestations: [{ predicateType: SLSA_PROVENANCE_V02, bundle: await attest(authority, lookAlike, SUBJECT) }],
      },
    })
    expect(await failure()).toBe('E_INTEGRITY/signature_invalid')
    const foreign = expectedIdentity('evil/tool', '.github/workflows/release.yml', 'v1.2.3')
    serve({
      attestations: {
        attestations: [{ predicateType: SLSA_PROVENANCE_V02, bundle: await attest(authority, v02, foreign) }],
      },
    })
    expect(await failure()).toMatch(/^E_INTEGRITY/)
  })

  it('refuses a statement with another predicate type, even when correctly signed', async () => {
    const bundle = await attest(authority, { ...statement(), predicateType: 'https://example.com/other' }, SUBJECT)
    serve({ attestations: { attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle }] } })
    expect(await failure()).toBe('E_INTEGRITY/bundle_invalid')
  })

  it('refuses a version the packument does not list, a digest that is not SHA-512, and a body that is not JSON', async () => {
    serve({ packument: { versions: {} } })
    expect(await failure()).toBe('E_NOT_FOUND')
    registry.reset()
    serve({ packument: { versions: { [VERSION]: { dist: { integrity: 'sha1-abc', tarball: 'x' } } } } })
    expect(await failure()).toBe('E_INTEGRITY/checksum_missing')
    registry.reset()
    serve({ raw: '<html>' })
    expect(await failure()).toBe('E_INTEGRITY/signature_invalid')
  })

  it('refuses an attestations answer of the wrong shape as missing provenance', async () => {
    for (const attestations of [{}, { attestations: 'x' }, { attestations: [{ predicateType: SLSA_PROVENANCE_V1 }] }]) {
      registry.reset()
      registry.use(authority.handler)
      serve({ attestations })
      expect(await failure()).toBe('E_INTEGRITY/signature_missing')
    }
  })
})

describe('verifyNpmProvenance against a hostile registry: forged, tampered, foreign, cancelled', () => {
  const good = async () => ({
    attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle: await attest(authority, statement(), SUBJECT) }],
  })

  it('refuses a provenance signed for another repository or workflow (a foreign identity)', async () => {
    const foreign = expectedIdentity('eve/tool', '.github/workflows/release.yml', 'v1.2.3')
    serve({
      attestations: {
        attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle: await attest(authority, statement(), foreign) }],
      },
    })
    expect(await failure()).toMatch(/^E_INTEGRITY\//)
  })

  it('refuses a statement edited after signing (forged payload), and a packument whose digest is not the attested one', async () => {
    const answer = await good()
    const bundle = answer.attestations[0]!.bundle as { dsseEnvelope: { payload: string } }
    const edited = { ...statement(), predicate: { buildType: 'forged' } }
    const forged = {
      ...bundle,
      dsseEnvelope: { ...bundle.dsseEnvelope, payload: Buffer.from(JSON.stringify(edited)).toString('base64') },
    }
    serve({ attestations: { attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle: forged }] } })
    expect(await failure()).toMatch(/^E_INTEGRITY\//)

    registry.reset()
    registry.use(authority.handler)
    const other = createHash('sha512').update('other bytes').digest('base64')
    serve({
      packument: {
        versions: { [VERSION]: { dist: { integrity: `sha512-${other}`, tarball: `${registry.url}t.tgz` } } },
      },
      attestations: await good(),
    })
    expect(await failure()).toMatch(/^E_INTEGRITY\//)
  })

  it('answers a cancelled call with the cancellation, and an unreachable registry with E_NETWORK', async () => {
    const controller = new AbortController()
    controller.abort(new Error('cancelled'))
    const options = {
      name: NAME,
      version: VERSION,
      identity: { subject: SUBJECT, issuer: authority.issuer },
      trustedRoot: authority.trustedRoot,
    }
    await expect(
      verifyNpmProvenance({ ...options, registry: registry.url, signal: controller.signal }),
    ).rejects.toThrow('cancelled')
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    await expect(verifyNpmProvenance({ ...options, registry: `http://127.0.0.1:${port}` })).rejects.toMatchObject({
      code: 'E_NETWORK',
    })
  })

  it('downloads only the attested bytes: a swapped tarball is E_INTEGRITY, a missing one E_NOT_FOUND, a failing one E_SERVER', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-provenance-'))
    try {
      const pkg = {
        name: NAME,
        version: VERSION,
        tarball: `${registry.url}t.tgz`,
        integrity: '',
        sha512: DIGEST.toString('hex'),
        signed_by: SUBJECT,
      }
      registry.use(http.get('*/t.tgz', () => new HttpResponse(TARBALL)))
      expect(await downloadVerifiedTarball(pkg, dir)).toMatch(/acme-tool-1\.2\.3\.tgz$/)
      for (const [response, code] of [
        [() => new HttpResponse('swapped bytes'), 'E_INTEGRITY'],
        [() => new HttpResponse(null, { status: 404 }), 'E_NOT_FOUND'],
        [() => new HttpResponse('down', { status: 503 }), 'E_SERVER'],
      ] as const) {
        registry.reset()
        registry.use(http.get('*/t.tgz', response))
        await expect(downloadVerifiedTarball(pkg, dir)).rejects.toMatchObject({ code })
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('verifyNpmProvenance: every answer of a broken registry fails closed', () => {
  it('a failing or missing packument, and a missing attestation, are errors, never a verified package', async () => {
    registry.use(http.get('*/@acme%2ftool', () => new HttpResponse('down', { status: 503 })))
    expect(await failure()).toBe('E_SERVER')
    registry.reset()
    registry.use(http.get('*/@acme%2ftool', () => new HttpResponse(null, { status: 404 })))
    expect(await failure()).toBe('E_NOT_FOUND')
    registry.reset()
    serve({})
    registry.use(http.get('*/-/npm/v1/attestations/*', () => new HttpResponse(null, { status: 404 })))
    expect(await failure()).toBe('E_INTEGRITY/signature_missing')
  })

  it('refuses a version without integrity or tarball, and attestations that are null, unsigned or not in-toto', async () => {
    serve({ packument: { versions: { [VERSION]: { dist: { tarball: 'x' } } } } })
    expect(await failure()).toBe('E_INTEGRITY/checksum_missing')
    registry.reset()
    serve({ packument: { versions: { [VERSION]: { dist: { integrity: `sha512-${DIGEST.toString('base64')}` } } } } })
    expect(await failure()).toBe('E_INTEGRITY/checksum_missing')
    const payload = (value: string, type = 'application/vnd.in-toto+json') => ({
      dsseEnvelope: { payloadType: type, payload: Buffer.from(value).toString('base64') },
    })
    for (const [bundle, verdict] of [
      [payload(JSON.stringify(statement()), 'text/plain'), 'bundle_invalid'],
      [payload('not json'), 'bundle_invalid'],
      [{ dsseEnvelope: { payloadType: 'application/vnd.in-toto+json', payload: 7 } }, 'bundle_invalid'],
      [null, 'signature_missing'],
      [payload(JSON.stringify({ ...statement(), subject: undefined })), 'signature_invalid'],
    ] as const) {
      registry.reset()
      registry.use(authority.handler)
      serve({ attestations: { attestations: [null, { predicateType: SLSA_PROVENANCE_V1, bundle }] } })
      expect(await failure()).toBe(`E_INTEGRITY/${verdict}`)
    }
  })

  it('accepts a registry URL without its trailing slash', async () => {
    serve({
      attestations: {
        attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle: await attest(authority, statement(), SUBJECT) }],
      },
    })
    const verified = await verifyNpmProvenance({
      registry: registry.url.replace(/\/$/, ''),
      name: NAME,
      version: VERSION,
      identity: { subject: SUBJECT, issuer: authority.issuer },
      trustedRoot: authority.trustedRoot,
    })
    expect(verified.signed_by).toBe(SUBJECT)
  })
})

/**
 * A raw loopback server for the describe block that calls it (msw's upstream sends nothing until a body is
 * complete, so a body that stalls or streams needs its own socket); returns its URL once it listens.
 */
function rawServer(handler: RequestListener): () => string {
  let server: Server | undefined
  let url = ''
  beforeAll(async () => {
    const listening = createServer(handler)
    server = listening
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}/`
  })
  afterAll(async () => {
    const listening = server
    if (!listening) return
    listening.closeAllConnections()
    await new Promise<void>((resolve) => listening.close(() => resolve()))
  })
  return () => url
}

describe('a registry whose answer stalls after its headers', () => {
  // The loopback upstream sends nothing until a handler's body is complete, so a raw server stands in here: the
  // headers and a first chunk arrive, then nothing. Whatever was read must not count as an answer.
  const stalled = rawServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"versions":')
  })

  const code = (error: unknown) => {
    const e = error as { code?: string; details?: Record<string, unknown> }
    return { code: e.code, stage: e.details?.stage, timeout_ms: e.details?.timeout_ms }
  }

  it('a packument body that stalls is E_TIMEOUT within timeoutMs, not an integrity verdict on half a body', async () => {
    const started = Date.now()
    const error = await verifyNpmProvenance({
      registry: stalled(),
      name: NAME,
      version: VERSION,
      identity: { subject: SUBJECT, issuer: authority.issuer },
      trustedRoot: authority.trustedRoot,
      timeoutMs: 400,
    }).catch((e: unknown) => e)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(code(error)).toEqual({ code: 'E_TIMEOUT', stage: 'verify_signature', timeout_ms: 400 })
  })

  it('a tarball body that stalls is E_TIMEOUT at the download stage within timeoutMs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-provenance-'))
    try {
      const pkg = {
        name: NAME,
        version: VERSION,
        tarball: `${stalled()}t.tgz`,
        integrity: '',
        sha512: '',
        signed_by: '',
      }
      const started = Date.now()
      const error = await downloadVerifiedTarball(pkg, dir, undefined, 400).catch((e: unknown) => e)
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(code(error)).toEqual({ code: 'E_TIMEOUT', stage: 'download', timeout_ms: 400 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a registry answer is read no further than registry_bytes', () => {
  // Raw loopback servers: one declares a body far over the limit and sends a few bytes, one streams past the
  // limit without a Content-Length; both then hold the connection open, so only a refusal at the limit (never
  // a read to the end, which would hang until the deadline) can answer before timeoutMs.
  const LIMIT = 64 * 1024
  let mode: 'declared' | 'streamed' = 'declared'
  let sent = 0
  const server = rawServer((_req, res) => {
    sent = 0
    if (mode === 'declared') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 ** 3) })
      res.write('{"versions":')
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    const chunk = Buffer.alloc(16 * 1024, 0x20)
    // Past the limit by one chunk, then nothing more: the reader must stop at the count, not at the end.
    for (; sent <= LIMIT; sent += chunk.length) res.write(chunk)
  })

  const bounded = (registry: string, maxBytes?: number) =>
    verifyNpmProvenance({
      registry,
      name: NAME,
      version: VERSION,
      identity: { subject: SUBJECT, issuer: authority.issuer },
      trustedRoot: authority.trustedRoot,
      timeoutMs: 20_000,
      ...(maxBytes === undefined ? {} : { maxBytes }),
    }).catch((e: unknown) => e as { code?: string; details?: Record<string, unknown> })

  it('a packument whose Content-Length is over the limit is too_large from the header, the URL as path', async () => {
    mode = 'declared'
    const error = await bounded(server(), LIMIT)
    expect(error).toMatchObject({
      code: 'E_INTEGRITY',
      details: {
        reason: 'too_large',
        stage: 'verify_signature',
        name: 'the package metadata',
        path: `${server()}@acme%2ftool`,
        limit: LIMIT,
        got: 10 * 1024 ** 3,
        setting: 'agentcli.update.limits.registry_bytes',
      },
    })
    expect((error as Error).message).not.toContain('at least')
  })

  it('the default limit is 32 MiB: the same declared body is refused without a maxBytes', async () => {
    mode = 'declared'
    expect(await bounded(server())).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'too_large', limit: 32 * 1024 * 1024, got: 10 * 1024 ** 3 },
    })
  })

  it('a packument streamed past the limit without a Content-Length is refused at the count', async () => {
    mode = 'streamed'
    const error = await bounded(server(), LIMIT)
    expect(error).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'too_large', path: `${server()}@acme%2ftool`, limit: LIMIT },
    })
    const got = (error as { details: { got: number } }).details.got
    expect(got).toBeGreaterThan(LIMIT)
    expect(got).toBeLessThanOrEqual(sent)
    expect((error as Error).message).toContain('at least')
  })

  it('answers within the limit still verify; the attestations are held to the same limit', async () => {
    const bundle = await attest(authority, statement(), SUBJECT)
    const attestations = { attestations: [{ predicateType: SLSA_PROVENANCE_V1, bundle }] }
    const size = Buffer.byteLength(JSON.stringify(attestations))
    serve({ attestations })
    // The attestations are the larger answer here: exactly their size passes, one byte less is refused.
    expect(await bounded(registry.url, size)).toMatchObject({ sha512: DIGEST.toString('hex'), signed_by: SUBJECT })
    expect(await bounded(registry.url, size - 1)).toMatchObject({
      code: 'E_INTEGRITY',
      details: {
        reason: 'too_large',
        name: 'the provenance attestation',
        path: `${registry.url}-/npm/v1/attestations/@acme%2ftool@1.2.3`,
        limit: size - 1,
        got: size,
      },
    })
  })
})
