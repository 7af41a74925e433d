/** agentcli/credentials: where credentials live and how they are reported. */
export { fileSecretStore } from './file-store.js'
export type { CredentialRecord, CredentialSource, SecretStore } from './types.js'
