import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HttpResponse, http } from 'msw'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  downloadVerifiedTarball,
  npmPurl,
  SLSA_PROVENANCE_V1,
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

describe('a registry whose answer stalls after its headers', () => {
  // The loopback upstream sends nothing until a handler's body is complete, so a raw server stands in here: the
  // headers and a first chunk arrive, then nothing. Whatever was read must not count as an answer.
  let stalled: Server
  let url: string
  beforeAll(async () => {
    stalled = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"versions":')
    })
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/`
  })
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        stalled.closeAllConnections()
        stalled.close(() => resolve())
      }),
  )

  const code = (error: unknown) => {
    const e = error as { code?: string; details?: Record<string, unknown> }
    return { code: e.code, stage: e.details?.stage, timeout_ms: e.details?.timeout_ms }
  }

  it('a packument body that stalls is E_TIMEOUT within timeoutMs, not an integrity verdict on half a body', async () => {
    const started = Date.now()
    const error = await verifyNpmProvenance({
      registry: url,
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
      const pkg = { name: NAME, version: VERSION, tarball: `${url}t.tgz`, integrity: '', sha512: '', signed_by: '' }
      const started = Date.now()
      const error = await downloadVerifiedTarball(pkg, dir, undefined, 400).catch((e: unknown) => e)
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(code(error)).toEqual({ code: 'E_TIMEOUT', stage: 'download', timeout_ms: 400 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
