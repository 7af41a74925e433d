/** One account's credential record. Never printed: only `status()` summaries leave the process. */
export type CredentialRecord = {
  /** The account it belongs to (a user name, an email): the key it is stored under. */
  account: string
  /** The token sent upstream (as `Authorization: Bearer …` by `upstream()`); registered as a secret, never printed. */
  access_token: string
  /** The token that gets a new record from `refreshCredential()`, or null when there is none. */
  refresh_token: string | null
  /** ISO 8601 UTC, or null for a token that does not expire. */
  expires_at: string | null
  /** The scopes the login granted; bound into confirm tokens with the account. */
  scopes: string[]
}

/** Where a credential came from. */
export type CredentialSource = 'env' | 'keychain' | 'file'

/** A place credentials are kept (spec 002 §10, §15.1). */
export type SecretStore = {
  /** Which store this is, as `context` reports it. */
  readonly source: CredentialSource
  /** The record of an account, or undefined when none is stored. */
  get(account: string): Promise<CredentialRecord | undefined>
  /** Store a record, replacing the account's previous one. */
  set(record: CredentialRecord): Promise<void>
  /** Remove an account's record; false when there was none. */
  delete(account: string): Promise<boolean>
  /** The accounts that have a record. */
  list(): Promise<string[]>
}
