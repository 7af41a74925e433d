import { Flags, type StorageMode } from 'agentcli'

/** Where a login may store its token. */
export const storageFlags = {
  'insecure-storage': Flags.boolean({
    description: 'Store the token in a 0600 file, not the OS keychain.',
    exclusive: ['require-keychain'],
  }),
  'require-keychain': Flags.boolean({
    description: 'Fail rather than fall back to a file when no keychain is available.',
  }),
}

/** The same storage flags, to repeat in a resume command. */
export function storageSuffix(flags: { 'insecure-storage'?: boolean; 'require-keychain'?: boolean }): string {
  if (flags['insecure-storage']) return ' --insecure-storage'
  if (flags['require-keychain']) return ' --require-keychain'
  return ''
}

/** The storage mode the flags ask for, if any. */
export function storageMode(flags: {
  'insecure-storage'?: boolean
  'require-keychain'?: boolean
}): StorageMode | undefined {
  if (flags['insecure-storage']) return 'file'
  if (flags['require-keychain']) return 'keychain'
  return undefined
}
