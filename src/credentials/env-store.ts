import { AgentError } from '../errors/agent-error.js'
import { registerSecret } from '../output/redact-secrets.js'
import type { CredentialRecord, SecretStore } from './types.js'

/**
 * A token injected through the environment (seed 000 §10: identity per job). Read-only and never saved:
 * logging in or out while it is set is a configuration error, not something to paper over.
 */
export function envSecretStore(variable: string, token: string, account: string): SecretStore {
  registerSecret(token)
  const record: CredentialRecord = { account, access_token: token, refresh_token: null, expires_at: null, scopes: [] }
  const readOnly = () =>
    new AgentError('E_CONFIG', `credentials come from ${variable}; they are not stored`, {
      details: { env: variable, fix: `unset ${variable} to use stored credentials` },
    })
  return {
    source: 'env',
    async get() {
      return record
    },
    async set() {
      throw readOnly()
    },
    async delete() {
      throw readOnly()
    },
    async list() {
      return [account]
    },
  }
}
