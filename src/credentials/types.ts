/** One account's credential record. Never printed: only `status()` summaries leave the process. */
export type CredentialRecord = {
  account: string
  access_token: string
  refresh_token: string | null
  /** ISO 8601 UTC, or null for a token that does not expire. */
  expires_at: string | null
  scopes: string[]
}

/** Where a credential came from. */
export type CredentialSource = 'env' | 'keychain' | 'file'

/** A place credentials are kept (spec 002 §10, §15.1). */
export type SecretStore = {
  readonly source: CredentialSource
  get(account: string): Promise<CredentialRecord | undefined>
  set(record: CredentialRecord): Promise<void>
  delete(account: string): Promise<boolean>
  list(): Promise<string[]>
}
