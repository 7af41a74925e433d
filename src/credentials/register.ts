import { registerSecret } from '../output/redact-secrets.js'
import type { CredentialRecord } from './types.js'

/** Register a record's secrets with the redactor: every store and every path (read, save, refresh) calls this. */
export function registerRecord(record: Pick<CredentialRecord, 'access_token' | 'refresh_token'> | undefined): void {
  registerSecret(record?.access_token)
  registerSecret(record?.refresh_token)
}
