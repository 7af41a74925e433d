import { createRequire } from 'node:module'
import { isMissing, missingError } from '../runtime/optional-peers.js'

/**
 * The public-good Sigstore trusted root as bundled inside @sigstore/tuf, read offline. It is a snapshot of the
 * day that library was released: `update` refreshes the root through TUF instead (`./trust-root.ts`); this copy
 * is for tools and tests that inspect it.
 */
export function publicGoodTrustedRoot(): unknown {
  const require = createRequire(import.meta.url)
  let seeds: Record<string, { targets: Record<string, string> }>
  try {
    seeds = require('@sigstore/tuf/seeds.json')
  } catch (error) {
    throw isMissing(error, 'update') ? missingError('update', error) : error
  }
  const encoded = seeds['https://tuf-repo-cdn.sigstore.dev']?.targets['trusted_root.json']
  if (!encoded) throw new Error('@sigstore/tuf ships no trusted_root.json')
  return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'))
}
