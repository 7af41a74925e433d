import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { readBody } from './_fetch.js'
import { integrityError } from './errors.js'
import { DEFAULT_UPDATE_LIMITS, tooLarge } from './limits.js'
import { type SigningIdentity, verifyBundle } from './signature.js'

/** The predicate type of the build provenance `npm publish --provenance` stores (SLSA v1). */
export const SLSA_PROVENANCE_V1 = 'https://slsa.dev/provenance/v1'
/**
 * The SLSA v0.2 predicate earlier `npm publish --provenance` runs stored. What is verified does not depend on the
 * predicate's body (the signer's workflow identity, the subject's purl and SHA-512), so both are accepted.
 */
export const SLSA_PROVENANCE_V02 = 'https://slsa.dev/provenance/v0.2'
const SLSA_PREDICATES: readonly string[] = [SLSA_PROVENANCE_V1, SLSA_PROVENANCE_V02]
/** The public npm registry, used when neither the tool nor npm's environment names another. */
export const DEFAULT_NPM_REGISTRY = 'https://registry.npmjs.org/'

/** One package version whose provenance verified: what to download, and the digest it must have. */
export type VerifiedPackage = {
  name: string
  version: string
  /** The tarball URL from the packument. */
  tarball: string
  /** The packument's `dist.integrity` (sha512 SRI), equal to the attested subject digest. */
  integrity: string
  /** The same digest in hex. */
  sha512: string
  /** The certificate identity that signed the provenance. */
  signed_by: string
}

type Statement = { _type?: string; predicateType?: string; subject?: Array<{ name?: string }> }

/** `@scope/name` as the registry's URL path wants it. */
const encodeName = (name: string) => name.replace('/', '%2f')

/** The in-toto subject name npm writes: a package URL, the scope's `@` percent-encoded. */
export function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, '%40')}@${version}`
}

/** How long one registry metadata request may take unless the caller says (never longer, for the update engine). */
export const METADATA_TIMEOUT_MS = 30_000
/** How long one tarball download may take unless the caller says. */
const TARBALL_TIMEOUT_MS = 5 * 60_000

/**
 * fetch and `read` the answer (body included) with the command's cancellation and a deadline; a failure is the
 * catalogue's, never a hang: `E_TIMEOUT` past the deadline, `E_NETWORK` for the transport, what `read` threw.
 */
async function fetchWithin<T>(
  url: string,
  options: { ms: number; stage: string; init?: RequestInit; signal?: AbortSignal | undefined },
  read: (response: Response, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { ms, stage } = options
  const deadline = AbortSignal.timeout(ms)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    return await read(await fetch(url, { ...options.init, signal }), signal)
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason
    if (isAgentError(error)) throw error
    if (deadline.aborted)
      throw new AgentError('E_TIMEOUT', `the npm registry did not answer ${url} within ${ms} ms`, {
        details: { stage, url, timeout_ms: ms },
        cause: error,
      })
    throw new AgentError('E_NETWORK', `cannot reach the npm registry: ${url}`, {
      details: { stage, url },
      cause: error,
    })
  }
}

async function getJson(
  url: string,
  what: string,
  bounds: { ms: number; maxBytes: number },
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const { ms, maxBytes } = bounds
  // The abbreviated packument carries dist.integrity and dist.tarball, at a fraction of the full document's size.
  const accept = 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8'
  const init = { headers: { accept } }
  return fetchWithin(url, { ms, stage: 'verify_signature', init, signal }, async (response) => {
    if (response.status === 404) return { status: 404, body: null }
    if (!response.ok)
      throw new AgentError('E_SERVER', `the npm registry answered HTTP ${response.status} for the ${what}`, {
        details: { stage: 'verify_signature', url, status: response.status },
      })
    // Read under the deadline first: a body that stalls is a timeout, only a body that arrived can be "not JSON".
    // Read no further than the limit: a hostile registry cannot fill the memory of the machine that updates.
    const over = (got: number, atLeast: boolean) =>
      tooLarge('registry_bytes', maxBytes, got, { stage: 'verify_signature', what: `the ${what}`, where: url, atLeast })
    const text = (await readBody(response, maxBytes, over)).toString('utf8')
    try {
      return { status: response.status, body: JSON.parse(text) as unknown }
    } catch {
      throw integrityError('signature_invalid', `the npm registry's ${what} is not JSON`, { url })
    }
  })
}

/**
 * Verify the registry's provenance attestation for `name@version` before anything is installed: the packument's
 * `dist.integrity`, the SLSA v1 attestation from `<registry>/-/npm/v1/attestations/<name>@<version>`, its bundle
 * verified by the update engine's own verifier against the pinned trusted root and the exact workflow identity,
 * and its in-toto subject naming this package version with that same SHA-512. A missing attestation is refused
 * (fail closed): npm itself does not check provenance on install, so nothing else would. Each registry request
 * is bounded by `timeoutMs` (default 30 s) and its body by `maxBytes` (default the `registry_bytes` limit, 32 MiB;
 * over it is `E_INTEGRITY` `too_large` with the URL as `path`).
 */
export async function verifyNpmProvenance(options: {
  registry: string
  name: string
  version: string
  identity: SigningIdentity
  trustedRoot: unknown
  signal?: AbortSignal
  timeoutMs?: number
  maxBytes?: number
}): Promise<VerifiedPackage> {
  const registry = options.registry.endsWith('/') ? options.registry : `${options.registry}/`
  const { name, version } = options
  const bounds = {
    ms: options.timeoutMs ?? METADATA_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_UPDATE_LIMITS.registry_bytes,
  }
  const packument = await getJson(`${registry}${encodeName(name)}`, 'package metadata', bounds, options.signal)
  const dist = (packument.body as { versions?: Record<string, { dist?: { integrity?: string; tarball?: string } }> })
    ?.versions?.[version]?.dist
  if (!dist)
    throw new AgentError('E_NOT_FOUND', `${name}@${version} is not in the npm registry ${registry}`, {
      details: { stage: 'verify_signature', package: name, version },
    })
  const integrity = dist.integrity ?? ''
  if (!/^sha512-[A-Za-z0-9+/]+={0,2}$/.test(integrity) || typeof dist.tarball !== 'string')
    throw integrityError('checksum_missing', `${name}@${version} has no SHA-512 integrity in the registry`, {
      got: integrity || null,
    })
  const sha512 = Buffer.from(integrity.slice('sha512-'.length), 'base64').toString('hex')
  const attestations = await getJson(
    `${registry}-/npm/v1/attestations/${encodeName(name)}@${version}`,
    'provenance attestation',
    bounds,
    options.signal,
  )
  const list = (attestations.body as { attestations?: Array<{ predicateType?: string; bundle?: unknown }> } | null)
    ?.attestations
  // The newest predicate the registry lists wins; the statement inside must say the same.
  const provenance = Array.isArray(list)
    ? SLSA_PREDICATES.map((type) => list.find((a) => a?.predicateType === type)).find(Boolean)
    : undefined
  if (!provenance?.bundle)
    throw integrityError(
      'signature_missing',
      `${name}@${version} has no SLSA provenance attestation in the registry; refusing to install an unattested package`,
      { package: name, version },
    )
  checkStatement(provenance.bundle, npmPurl(name, version), provenance.predicateType!)
  const signer = await verifyBundle({
    bundle: provenance.bundle,
    artifact: Buffer.alloc(0),
    identity: options.identity,
    trustedRoot: options.trustedRoot,
    attestedDigest: { algorithm: 'sha512', hex: sha512 },
  })
  return { name, version, tarball: dist.tarball, integrity, sha512, signed_by: signer.subject }
}

/** The attestation must be an in-toto SLSA statement, of the type the registry listed, about exactly this version. */
function checkStatement(bundle: unknown, purl: string, predicateType: string): void {
  const envelope = (bundle as { dsseEnvelope?: { payload?: unknown; payloadType?: unknown } } | null)?.dsseEnvelope
  let statement: Statement | undefined
  try {
    if (envelope?.payloadType === 'application/vnd.in-toto+json' && typeof envelope.payload === 'string')
      statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as Statement
  } catch {}
  if (!statement || statement.predicateType !== predicateType)
    throw integrityError('bundle_invalid', `the provenance attestation is not an in-toto ${predicateType} statement`)
  if (!statement.subject?.some((s) => s.name === purl))
    throw integrityError('signature_invalid', `the provenance attestation is not about ${purl}`, {
      expected: purl,
      got: statement.subject?.map((s) => s.name) ?? [],
    })
}

/**
 * Download the verified tarball into `dir` and check its SHA-512 against the attested digest, so that npm then
 * installs exactly the bytes the provenance names (not whatever the registry serves on a second request). The
 * whole download, body included, is bounded by `timeoutMs` (default 5 min).
 */
export async function downloadVerifiedTarball(
  pkg: VerifiedPackage,
  dir: string,
  signal?: AbortSignal,
  timeoutMs = TARBALL_TIMEOUT_MS,
): Promise<string> {
  const path = join(dir, `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`)
  const hash = createHash('sha512')
  await fetchWithin(pkg.tarball, { ms: timeoutMs, stage: 'download', signal }, async (response, bounded) => {
    if (!response.ok || !response.body)
      throw new AgentError(
        response.status === 404 ? 'E_NOT_FOUND' : 'E_SERVER',
        `download failed: HTTP ${response.status}`,
        { details: { stage: 'download', status: response.status } },
      )
    const source = Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>)
    source.on('data', (chunk: Buffer) => hash.update(chunk))
    await pipeline(source, createWriteStream(path, { mode: 0o600 }), { signal: bounded })
  })
  const got = hash.digest('hex')
  if (got !== pkg.sha512)
    throw integrityError('checksum_mismatch', `the downloaded ${pkg.name}@${pkg.version} is not the attested tarball`, {
      stage: 'verify_checksum',
      expected_sha512: pkg.sha512,
      got_sha512: got,
    })
  return path
}
