import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import type { AgentError } from '../errors/agent-error.js'
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

/** The public-good Sigstore trusted root that ships inside @sigstore/tuf, read offline. */
export function publicGoodTrustedRoot(): unknown {
  const require = createRequire(import.meta.url)
  const seeds = require('@sigstore/tuf/seeds.json') as Record<string, { targets: Record<string, string> }>
  const encoded = seeds['https://tuf-repo-cdn.sigstore.dev']?.targets['trusted_root.json']
  if (!encoded) throw new Error('@sigstore/tuf ships no trusted_root.json')
  return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))
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
  const [{ bundleFromJSON, ValidationError }, { TrustedRoot }, verify] = await Promise.all([
    import('@sigstore/bundle'),
    import('@sigstore/protobuf-specs'),
    import('@sigstore/verify'),
  ])
  const raw = options.bundle as Record<string, unknown> | null
  if (!raw || typeof raw !== 'object' || 'base64Signature' in raw) {
    throw integrityError('bundle_invalid', 'the signature bundle is a legacy cosign bundle or not a Sigstore bundle', {
      legacy: Boolean(raw && 'base64Signature' in raw),
    })
  }
  let bundle: ReturnType<typeof bundleFromJSON>
  try {
    bundle = bundleFromJSON(raw)
  } catch (error) {
    throw integrityError(
      'bundle_invalid',
      `the signature bundle is malformed: ${error instanceof ValidationError ? error.message : String(error)}`,
    )
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
    throw integrityError('root_untrusted', `the trusted root cannot be read: ${(error as Error).message}`)
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
  const subject = signer.identity?.subjectAlternativeName
  const issuer = signer.identity?.extensions?.issuer
  if (subject !== options.identity.subject)
    throw integrityError('identity_mismatch', `signed by ${subject}, expected ${options.identity.subject}`, {
      expected: options.identity.subject,
      got: subject ?? null,
    })
  if (issuer !== options.identity.issuer)
    throw integrityError('issuer_mismatch', `issuer ${issuer}, expected ${options.identity.issuer}`, {
      expected: options.identity.issuer,
      got: issuer ?? null,
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
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof verify.PolicyError) {
    if (/issuer/i.test(message))
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
