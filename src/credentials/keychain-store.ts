import { AgentError } from '../errors/agent-error.js'
import { isMissing, missingError } from '../runtime/optional-peers.js'
import { registerRecord } from './register.js'
import type { CredentialRecord, SecretStore } from './types.js'

/** Why the keychain could not be used. */
export type KeychainProblem = 'unavailable' | 'locked' | 'timeout' | 'missing'

/** A keychain failure, classified: an unusable keychain is never mistaken for "not logged in". */
export class KeychainError extends Error {
  override name = 'KeychainError'
  constructor(
    readonly problem: KeychainProblem,
    message: string,
  ) {
    super(message)
  }
}

type Entry = {
  getPassword(signal?: AbortSignal): Promise<string | null>
  setPassword(value: string, signal?: AbortSignal): Promise<void>
  deletePassword(signal?: AbortSignal): Promise<boolean>
}
type EntryClass = new (service: string, account: string, options: { linux: { store: 'secret-service' } }) => Entry

/**
 * Tell a locked keychain from a missing one. The keyring library reports every failure as a plain Error with
 * code GenericFailure; its message is the only clue, so it is read here and nowhere else.
 */
export function classify(error: unknown): KeychainError {
  const message = error instanceof Error ? error.message : String(error)
  if (/locked|unlock|no result found/i.test(message)) return new KeychainError('locked', message)
  return new KeychainError('unavailable', message)
}

const INDEX_ACCOUNT = '__accounts__'

/**
 * The OS keychain through @napi-rs/keyring (loaded lazily), pinned to the Secret Service on Linux so it never
 * falls back to the kernel keyring. One entry per account is reused for the process; every call has a timeout.
 */
export function keychainSecretStore(service: string, timeoutMs = 4000): SecretStore & { probe(): Promise<void> } {
  let Entry: EntryClass | undefined
  const entries = new Map<string, Entry>()
  const entry = async (account: string): Promise<Entry> => {
    if (!Entry) {
      try {
        Entry = (await import('@napi-rs/keyring')).AsyncEntry as unknown as EntryClass
      } catch (error) {
        // Not installed (an optional peer) is the tool's omission, not the machine's: never a silent file fallback.
        if (isMissing(error, 'keychain')) throw new KeychainError('missing', missingError('keychain').message)
        throw new KeychainError('unavailable', `the keychain library cannot load: ${(error as Error).message}`)
      }
    }
    let e = entries.get(account)
    if (!e) {
      try {
        e = new Entry(service, account, { linux: { store: 'secret-service' } })
      } catch (error) {
        throw classify(error)
      }
      entries.set(account, e)
    }
    return e
  }
  const call = async <T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort()
        reject(new KeychainError('timeout', `the keychain did not answer within ${timeoutMs} ms`))
      }, timeoutMs)
    })
    try {
      return await Promise.race([
        fn(controller.signal).catch((error: unknown) =>
          Promise.reject(error instanceof KeychainError ? error : classify(error)),
        ),
        timeout,
      ])
    } finally {
      clearTimeout(timer)
    }
  }
  const readIndex = async (): Promise<string[]> => {
    const raw = await call(async (signal) => (await entry(INDEX_ACCOUNT)).getPassword(signal))
    try {
      const parsed = raw ? (JSON.parse(raw) as unknown) : []
      return Array.isArray(parsed) ? parsed.filter((a): a is string => typeof a === 'string') : []
    } catch {
      return []
    }
  }
  const writeIndex = async (accounts: string[]) => {
    await call(async (signal) =>
      (await entry(INDEX_ACCOUNT)).setPassword(JSON.stringify([...new Set(accounts)].sort()), signal),
    )
  }
  return {
    source: 'keychain',
    async get(account) {
      const raw = await call(async (signal) => (await entry(account)).getPassword(signal))
      if (raw === null) return undefined
      try {
        const record = JSON.parse(raw) as CredentialRecord
        registerRecord(record)
        return record
      } catch {
        throw new AgentError('E_IO', `the keychain entry for ${account} is not a credential record`, {
          details: { account, fix: `run \`${service} logout\` and log in again` },
        })
      }
    },
    async set(record) {
      registerRecord(record)
      await call(async (signal) => (await entry(record.account)).setPassword(JSON.stringify(record), signal))
      await writeIndex([...(await readIndex()), record.account])
    },
    async delete(account) {
      const deleted = await call(async (signal) => (await entry(account)).deletePassword(signal))
      await writeIndex((await readIndex()).filter((a) => a !== account))
      return deleted
    },
    async list() {
      return readIndex()
    },
    /** A write and a delete: the only reliable test that the keychain can be used (a locked one reads null). */
    async probe() {
      const probe = await entry('__probe__')
      await call((signal) => probe.setPassword('probe', signal))
      await call((signal) => probe.deletePassword(signal))
    },
  }
}
