import type { createAuthority } from './sigstore.js'

type Authority = Awaited<ReturnType<typeof createAuthority>>

/**
 * An in-toto attestation bundle over `statement`, signed by `authority` for `subject`: the shape
 * `npm publish --provenance` stores in the registry's attestations endpoint.
 */
export function attest(authority: Authority, statement: unknown, subject: string): Promise<unknown> {
  return authority.sign(Buffer.from(JSON.stringify(statement)), subject, undefined, 'dsse')
}
