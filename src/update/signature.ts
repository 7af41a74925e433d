import { createHash } from 'node:crypto'
import type { AgentError } from '../errors/agent-error.js'
import { loadOptional } from '../runtime/optional-peers.js'
import { integrityError } from './errors.js'

/** Who must have signed a release (spec 002 §14). */
export type SigningIdentity = {
  /** `https://github.com/OWNER/REPO/<workflow>@refs/tags/vX`, compared exactly. */
  subject: string
  /** `https://token.actions.githubusercontent.com` for GitHub Actions, compared exactly. */
  issuer: string
}

/** The expected certificate identity of a release tag. */
export function expectedIdentity(repository: string, workflow: string, tag: string): string {
  return `https://github.com/${repository}/${workflow.replace(/^\//, '')}@refs/tags/${tag}`
}

/**
 * The identity a release of `version` must carry. The tag is built from the version being installed (and the
 * tool's declared `tag_prefix`), never read from the release source: a mirror or a directory that labels 1.2.3
 * with the tag `v1.2.30` is still held to the `v1.2.3` identity, so a signed 1.2.30 cannot pose as 1.2.3.
 */
export function releaseIdentity(
  declared: { repository: string; workflow: string; issuer: string; tag_prefix: string },
  version: string,
): SigningIdentity {
  return {
    subject: expectedIdentity(declared.repository, declared.workflow, `${declared.tag_prefix}${version}`),
    issuer: declared.issuer,
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Verify a Sigstore bundle over `artifact` (checksums.txt) against a pinned trusted root, offline. The identity
 * is matched as an anchored, escaped pattern *and* compared with `===`: @sigstore/verify treats a plain-string
 * SAN as an unanchored regular expression, so a certificate for v1.2.30 would otherwise pass for v1.2.3.
 * Every failure is `E_INTEGRITY` with a reason; anything unexpected fails closed.
 */
export async function verifyBundle(options: {
  bundle: unknown
  artifact: Buffer
  identity: SigningIdentity
  trustedRoot: unknown
  /** An attestation's expected subject digest when it is not SHA-256(artifact), e.g. an npm tarball's SHA-512. */
  attestedDigest?: { algorithm: 'sha256' | 'sha512'; hex: string }
}): Promise<{ subject: string; issuer: string }> {
  const [{ bundleFromJSON, ValidationError }, { TrustedRoot }, verify] = await loadOptional('update', () =>
    Promise.all([import('@sigstore/bundle'), import('@sigstore/protobuf-specs'), import('@sigstore/verify')]),
  )
  const raw = options.bundle
  // A bundle that is not a JSON object (text, a number, null, an array) is refused before the parser sees it.
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw integrityError('bundle_invalid', 'the signature bundle is not a JSON object', { legacy: false })
  if ('base64Signature' in raw)
    throw integrityError('bundle_invalid', 'the signature bundle is a legacy cosign bundle, not a Sigstore bundle', {
      legacy: true,
    })
  let bundle: ReturnType<typeof bundleFromJSON>
  try {
    bundle = bundleFromJSON(raw)
  } catch (error) {
    // ValidationError names the bad fields; anything else the parser throws is as malformed, and fails closed.
    const why = error instanceof ValidationError ? `${error.message} (${error.fields.join(', ')})` : String(error)
    throw integrityError('bundle_invalid', `the signature bundle is malformed: ${why}`)
  }
  if (bundle.content.$case === 'dsseEnvelope')
    checkAttestationSubject(
      bundle.content.dsseEnvelope.payload,
      options.attestedDigest ?? {
        algorithm: 'sha256',
        hex: createHash('sha256').update(options.artifact).digest('hex'),
      },
    )
  let trust: ReturnType<typeof verify.toTrustMaterial>
  try {
    trust = verify.toTrustMaterial(TrustedRoot.fromJSON(options.trustedRoot))
  } catch (error) {
    throw integrityError('root_untrusted', `the trusted root cannot be read: ${String(error)}`)
  }
  let signer: ReturnType<InstanceType<typeof verify.Verifier>['verify']>
  try {
    signer = new verify.Verifier(trust).verify(verify.toSignedEntity(bundle, options.artifact), {
      subjectAlternativeName: new RegExp(`^${escapeRegExp(options.identity.subject)}$`),
      extensions: { issuer: options.identity.issuer },
    })
  } catch (error) {
    throw mapVerifyError(error, verify)
  }
  return exactSigner(signer.identity, options.identity)
}

/**
 * Belt and braces after the library's policy check: the signer's SAN and issuer must equal the expected ones
 * as strings. The anchored pattern already implies it with @sigstore/verify 4; this holds the guarantee if a
 * later version changes how it matches.
 */
export function exactSigner(
  signer: { subjectAlternativeName?: string; extensions?: { issuer?: string } } | undefined,
  expected: SigningIdentity,
): { subject: string; issuer: string } {
  const subject = signer?.subjectAlternativeName
  const issuer = signer?.extensions?.issuer
  if (subject !== expected.subject || issuer !== expected.issuer)
    throw integrityError('identity_mismatch', `signed by ${JSON.stringify(subject)}, expected ${expected.subject}`, {
      expected: expected.subject,
      got: subject ?? null,
      issuer: issuer ?? null,
    })
  return { subject, issuer }
}

/** An attestation (DSSE) bundle signs a statement, not our bytes: its subject digest must be the expected one. */
function checkAttestationSubject(payload: Buffer, expected: { algorithm: 'sha256' | 'sha512'; hex: string }): void {
  let subjects: Array<{ digest?: Record<string, string> }> = []
  try {
    subjects = (JSON.parse(payload.toString('utf8')) as { subject?: typeof subjects }).subject ?? []
  } catch {}
  if (!subjects.some((s) => s.digest?.[expected.algorithm] === expected.hex)) {
    throw integrityError('signature_invalid', 'the attestation does not name the expected artifact as its subject', {
      [`expected_${expected.algorithm}`]: expected.hex,
    })
  }
}

type VerifyModule = typeof import('@sigstore/verify')

function mapVerifyError(error: unknown, verify: VerifyModule): AgentError {
  const message = String(error)
  if (error instanceof verify.PolicyError) {
    // The two policy failures share a code; the library's own message prefix tells them apart.
    if (error.message.startsWith('invalid certificate extension'))
      return integrityError('issuer_mismatch', `the certificate's issuer is not the expected one: ${message}`)
    return integrityError('identity_mismatch', `the certificate's identity is not the expected one: ${message}`)
  }
  if (error instanceof verify.VerificationError) {
    if (error.code === 'CERTIFICATE_ERROR')
      return integrityError('root_untrusted', `the certificate does not chain to the trusted root: ${message}`)
    return integrityError('signature_invalid', `the signature does not verify (${error.code}): ${message}`)
  }
  return integrityError('signature_invalid', `the signature could not be verified: ${message}`)
}
