import { createHash } from 'node:crypto'
import { HttpResponse, http } from 'msw'
import { attest } from './attest.js'
import type { createAuthority } from './sigstore.js'
import type { Upstream } from './upstream.js'

// The npm registry side of an npm-method update, for command-level tests: the packument, the attestations
// endpoint and the tarball of one package version, served by msw on the test's loopback upstream under
// `<upstream>/registry/`. The tool is pointed at it with `<BIN>_NPM_REGISTRY` (choosing a registry weakens
// nothing: what it serves must still verify against the root the install pins in its package.json).

type Authority = Awaited<ReturnType<typeof createAuthority>>

/** The predicate type of the SLSA v1 build provenance `npm publish --provenance` stores. */
export const SLSA = 'https://slsa.dev/provenance/v1'
/** npm's own publish attestation, listed next to the provenance (and never enough on its own). */
export const NPM_PUBLISH = 'https://github.com/npm/attestation/tree/main/specs/publish/v0.1'

/** SHA-512 of some bytes. */
export const sha512 = (b: Buffer): Buffer => createHash('sha512').update(b).digest()
/** The `dist.integrity` form (SRI) of some bytes' SHA-512. */
export const sri = (b: Buffer): string => `sha512-${sha512(b).toString('base64')}`

/** An in-toto SLSA v1 statement about `purl` (`pkg:npm/<name>@<version>`) whose subject digest is `digestOf`'s. */
export function provenanceStatement(purl: string, digestOf: Buffer) {
  return {
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ name: purl, digest: { sha512: sha512(digestOf).toString('hex') } }],
    predicateType: SLSA,
    predicate: {
      buildDefinition: { buildType: 'https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1' },
    },
  }
}

/** The registry's attestations answer: the publish attestation and a provenance over `statement` signed for `subject`. */
export async function attestationsFor(by: Authority, statement: unknown, subject: string) {
  return {
    attestations: [
      { predicateType: NPM_PUBLISH, bundle: {} },
      { predicateType: SLSA, bundle: await attest(by, statement, subject) },
    ],
  }
}

/** One unscoped package version as the registry publishes it; the optional members make a hostile registry. */
export type NpmPackage = {
  name: string
  version: string
  /** The bytes the provenance is about (and, unless `served`, the bytes served). */
  tarball: Buffer
  /** The attestations answer (see {@link attestationsFor}). */
  attestations?: unknown
  /** Answer the attestations request with this HTTP status instead. */
  attestationStatus?: number
  /** The packument's `dist.integrity` (default: the SRI of `tarball`). */
  integrity?: string
  /** The bytes the tarball URL serves (default: `tarball`). */
  served?: Buffer
}

/** Serve `pkg` on `api` under `/registry/` and answer the registry URL to give the tool. */
export function serveNpmPackage(api: Upstream, pkg: NpmPackage): string {
  const { name, version } = pkg
  const registry = `${api.url}registry/`
  api.use(
    http.get(`*/registry/${name}`, () =>
      HttpResponse.json({
        name,
        'dist-tags': { latest: version },
        versions: {
          [version]: {
            name,
            version,
            dist: {
              integrity: pkg.integrity ?? sri(pkg.tarball),
              tarball: `${registry}${name}/-/${name}-${version}.tgz`,
            },
          },
        },
      }),
    ),
    http.get(`*/registry/-/npm/v1/attestations/${name}@${version}`, () =>
      pkg.attestationStatus
        ? new HttpResponse('{"error":"not found"}', { status: pkg.attestationStatus })
        : HttpResponse.json(pkg.attestations as Record<string, unknown>),
    ),
    http.get(
      `*/registry/${name}/-/${name}-${version}.tgz`,
      () => new HttpResponse(new Uint8Array(pkg.served ?? pkg.tarball)),
    ),
  )
  return registry
}
