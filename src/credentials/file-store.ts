import { join } from 'node:path'
import { readJsonFile, writeJsonAtomic } from '../fs/json-file.js'
import { registerRecord } from './register.js'
import type { CredentialRecord, SecretStore } from './types.js'

type FileShape = { version: 1; accounts: Record<string, CredentialRecord> }

function isShape(value: unknown): value is FileShape {
  const v = value as FileShape
  return typeof v === 'object' && v !== null && v.version === 1 && typeof v.accounts === 'object' && v.accounts !== null
}

/** The credentials file in the config dir: JSON, 0600 in 0700, written atomically; a link, another user's file or one others can read is refused (`readJsonFile`). */
export function fileSecretStore(configDir: string): SecretStore {
  const path = join(configDir, 'credentials.json')
  const read = async (): Promise<FileShape> => {
    const file = await readJsonFile(path, (): FileShape => ({ version: 1, accounts: {} }), isShape, { secret: true })
    for (const record of Object.values(file.accounts)) registerRecord(record)
    return file
  }
  return {
    source: 'file',
    async get(account) {
      return (await read()).accounts[account]
    },
    async set(record) {
      registerRecord(record)
      const file = await read()
      file.accounts[record.account] = record
      await writeJsonAtomic(path, file, { mode: 0o600, dirMode: 0o700 })
    },
    async delete(account) {
      const file = await read()
      if (!(account in file.accounts)) return false
      delete file.accounts[account]
      await writeJsonAtomic(path, file, { mode: 0o600, dirMode: 0o700 })
      return true
    },
    async list() {
      return Object.keys((await read()).accounts).sort()
    },
  }
}
