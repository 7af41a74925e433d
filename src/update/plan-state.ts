import type { InstallMethod } from './install.js'

/** What the confirm step needs, fixed at dry-run time and bound into the token. */
export type UpdatePlanState = {
  kind: 'update'
  install: InstallMethod
  from: string
  to: string
  tag: string
  tarball: { name: string; url: string; sha256: string } | null
  checksums: { text: string; sha256: string; name: string } | null
  bundle: unknown
}

/** The result of an update or a rollback. */
export type UpdateResult = {
  previous_version: string
  current_version: string
  install_method: InstallMethod['method']
  signature_status: 'verified' | 'verified_provenance' | 'not_checked'
  signature_verified: boolean
  checksum_verified: boolean
  skill_sync_status: 'synced' | 'not_applicable' | 'failed'
  hint: string
}
