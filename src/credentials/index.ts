/** The credentials barrel (internal: not an entry point of the package): where credentials live and how they are reported. */
export {
  type CredentialStatus,
  Credentials,
  type CredentialsOptions,
  envPrefix,
  isValid,
  type StorageMode,
} from './credentials.js'
export { envSecretStore } from './env-store.js'
export { fileSecretStore } from './file-store.js'
export { classify, KeychainError, type KeychainProblem, keychainSecretStore } from './keychain-store.js'
export type { CredentialRecord, CredentialSource, SecretStore } from './types.js'
