import { join } from 'node:path'
import type { Config } from '@oclif/core'
import { readJsonFile, writeJsonAtomic } from 'agentcli/fs'

type Session = { account: string | null }

/** Which account is current: a pointer in the config dir (not a secret; the token lives in the secret store). */
export async function currentAccount(config: Config): Promise<string | null> {
  const session = await readJsonFile<Session>(
    join(config.configDir, 'session.json'),
    () => ({ account: null }),
    (v): v is Session => typeof v === 'object' && v !== null && 'account' in v,
  )
  return session.account
}

/** Make `account` current, or clear it. */
export async function setCurrentAccount(config: Config, account: string | null): Promise<void> {
  await writeJsonAtomic(join(config.configDir, 'session.json'), { account })
}
