import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { readJsonFile, writeJsonAtomic } from '../fs/json-file.js'
import { registerRecord } from './register.js'
import type { CredentialRecord, SecretStore } from './types.js'

type FileShape = { version: 1; accounts: Record<string, CredentialRecord> }

function isShape(value: unknown): value is FileShape {
  const v = value as FileShape
  return typeof v === 'object' && v !== null && v.version === 1 && typeof v.accounts === 'object' && v.accounts !== null
}

/** The credentials file in the config dir: JSON, 0600 in 0700, written atomically, refused if readable by others. */
export function fileSecretStore(configDir: string): SecretStore {
  const path = join(configDir, 'credentials.json')
  const read = async (): Promise<FileShape> => {
    try {
      const info = await stat(path)
      if ((info.mode & 0o077) !== 0) {
        throw new AgentError(
          'E_CONFIG',
          `${path} is readable by other users (mode ${(info.mode & 0o777).toString(8)})`,
          {
            details: { path, fix: `chmod 600 ${path}` },
          },
        )
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const file = await readJsonFile(path, (): FileShape => ({ version: 1, accounts: {} }), isShape)
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
