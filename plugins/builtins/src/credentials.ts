import type { Config } from '@oclif/core'

/** Credential status as `context` reports it (spec 002 §15.1): booleans and redacted summaries only. */
export type CredentialStatus = {
  configured: boolean
  valid: boolean
  expires_at: string | null
  refreshable: boolean
  source: 'env' | 'keychain' | 'file' | null
}

/** The status, and the account it belongs to when known. */
export async function credentialStatus(config: Config): Promise<{ status: CredentialStatus; account: string | null }> {
  const variable = `${config.bin.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_TOKEN`
  if (process.env[variable]) {
    return {
      status: { configured: true, valid: true, expires_at: null, refreshable: false, source: 'env' },
      account: null,
    }
  }
  return {
    status: { configured: false, valid: false, expires_at: null, refreshable: false, source: null },
    account: null,
  }
}
