import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { readJsonFile, writeJsonAtomic } from '../fs/json-file.js'
import { missingError } from '../runtime/optional-peers.js'
import { envPrefix, toolEnv } from '../settings/tool-env.js'
import { envSecretStore } from './env-store.js'
import { fileSecretStore } from './file-store.js'
import { KeychainError, keychainSecretStore } from './keychain-store.js'
import { registerRecord } from './register.js'
import type { CredentialRecord, CredentialSource, SecretStore } from './types.js'

/** How credentials may be stored: keychain with a file fallback, keychain only, or the file only. */
export type StorageMode = 'auto' | 'keychain' | 'file'

/** What `context` reports (spec 002 §15.1): booleans and dates, never a secret. */
export type CredentialStatus = {
  /** Whether a credential is stored or injected at all. */
  configured: boolean
  /** Whether it has not expired (a credential that does not expire is valid). */
  valid: boolean
  /** When it expires (ISO 8601 UTC), or null. */
  expires_at: string | null
  /** Whether the tool can refresh it: it refreshes, the record has a refresh token, and it is not injected. */
  refreshable: boolean
  /** Where it came from, or null when none is configured. */
  source: CredentialSource | null
}

/** Options of {@link Credentials}. */
export type CredentialsOptions = {
  /** The tool's bin: the keychain service name and the prefix of its environment variables. */
  bin: string
  configDir: string
  mode: StorageMode
  /** Whether the tool can refresh an expired access token. */
  refreshable: boolean
  warn: (message: string) => void
  /** Keychain call timeout. */
  timeoutMs?: number
}

type Session = { account: string | null }

/** The credential files already warned about in this process: the fallback is said once, not per request. */
const warnedFallback = new Set<string>()
const isSession = (v: unknown): v is Session => typeof v === 'object' && v !== null && 'account' in v

/**
 * A tool's credentials, in the order of spec 002 §10 and seed 000 §10: an injected `<BIN>_TOKEN` (read-only),
 * the OS keychain, then a 0600 file used only when the keychain is unavailable (with a warning), or when the
 * tool or the user forces it. A locked keychain, or one that fails, is an error — never "logged out".
 */
export class Credentials {
  readonly keychain: ReturnType<typeof keychainSecretStore>
  readonly file: SecretStore
  private readonly env: ReturnType<typeof toolEnv>

  constructor(private readonly options: CredentialsOptions) {
    this.env = toolEnv(options.bin)
    this.keychain = keychainSecretStore(options.bin, options.timeoutMs)
    this.file = fileSecretStore(options.configDir)
  }

  /** The injected store, when `<BIN>_TOKEN` is set. */
  injected(): SecretStore | undefined {
    const token = this.env.raw('TOKEN')
    return token ? envSecretStore(this.env.name('TOKEN'), token, this.env.raw('ACCOUNT') ?? 'env') : undefined
  }

  /** The current account: the injected one, else the one the last login chose. */
  async currentAccount(): Promise<string | null> {
    const env = this.injected()
    if (env) return (await env.list())[0]!
    const session = await readJsonFile<Session>(this.sessionPath(), () => ({ account: null }), isSession)
    return session.account
  }

  /** The acting account and the scopes its login recorded (null when unknown), without reading any secret. */
  async session(): Promise<{ account: string | null; scopes: string[] | null }> {
    if (this.injected()) return { account: await this.currentAccount(), scopes: null }
    const session = await readJsonFile<Session>(this.sessionPath(), () => ({ account: null }), isSession)
    const scopes = (session as { scopes?: unknown }).scopes
    return {
      account: session.account,
      scopes: Array.isArray(scopes) && scopes.every((x) => typeof x === 'string') ? scopes : null,
    }
  }

  /** The current account's record and where it came from, or undefined when nobody is logged in. */
  async read(): Promise<{ record: CredentialRecord; source: CredentialSource } | undefined> {
    const found = await this.lookup()
    // Whatever store answered: every secret the process learns is scrubbed from everything it prints.
    if (found) registerRecord(found.record)
    return found
  }

  private async lookup(): Promise<{ record: CredentialRecord; source: CredentialSource } | undefined> {
    const env = this.injected()
    if (env) return { record: (await env.get(''))!, source: 'env' }
    const account = await this.currentAccount()
    if (!account) return undefined
    if (this.options.mode === 'file') return this.fromFile(account)
    try {
      const record = await this.keychain.get(account)
      if (record) return { record, source: 'keychain' }
      // A locked keyring can answer null: only a write tells "empty" from "unusable".
      await this.keychain.probe()
    } catch (error) {
      if (!(error instanceof KeychainError)) throw error
      this.fallbackOrThrow(error)
    }
    return this.fromFile(account)
  }

  /** Store a record (keychain, or the file per the mode) and make its account current. */
  async save(record: CredentialRecord): Promise<CredentialSource> {
    registerRecord(record)
    const env = this.injected()
    if (env) await env.set(record)
    let source: CredentialSource = 'file'
    if (this.options.mode === 'file') await this.file.set(record)
    else {
      try {
        await this.keychain.set(record)
        source = 'keychain'
      } catch (error) {
        if (!(error instanceof KeychainError)) throw error
        this.fallbackOrThrow(error)
        await this.file.set(record)
      }
    }
    // The scopes go beside the account: a write's confirm token binds them without reading the keychain.
    await writeJsonAtomic(this.sessionPath(), { account: record.account, scopes: record.scopes })
    return source
  }

  /** Remove the current account's record from every store that holds it, and forget the account. */
  async remove(): Promise<{ account: string | null; removed: boolean }> {
    const env = this.injected()
    if (env) await env.delete('')
    const account = await this.currentAccount()
    if (!account) return { account: null, removed: false }
    let removed = false
    if (this.options.mode !== 'file') {
      try {
        removed = await this.keychain.delete(account)
      } catch (error) {
        if (!(error instanceof KeychainError)) throw error
        this.fallbackOrThrow(error)
      }
    }
    removed = (await this.file.delete(account)) || removed
    await writeJsonAtomic(this.sessionPath(), { account: null })
    return { account, removed }
  }

  /** The status `context` and `doctor` report. */
  async status(): Promise<{ account: string | null; status: CredentialStatus }> {
    const found = await this.read()
    if (!found)
      return {
        account: null,
        status: { configured: false, valid: false, expires_at: null, refreshable: false, source: null },
      }
    const { record, source } = found
    const refreshable = this.options.refreshable && record.refresh_token !== null && source !== 'env'
    return {
      account: record.account,
      status: { configured: true, valid: isValid(record), expires_at: record.expires_at, refreshable, source },
    }
  }

  private async fromFile(account: string) {
    const record = await this.file.get(account)
    return record ? { record, source: 'file' as const } : undefined
  }

  private fallbackOrThrow(error: KeychainError): void {
    if (error.problem === 'missing') throw missingError('keychain', error)
    if (error.problem === 'timeout') {
      throw new AgentError('E_TIMEOUT', error.message, {
        details: { reason: 'keychain_timeout', fix: 'check that the Secret Service (gnome-keyring, KWallet) responds' },
      })
    }
    if (error.problem === 'locked') {
      throw new AgentError('E_CONFIG', 'the keychain is locked', {
        details: {
          reason: 'keychain_locked',
          fix: 'unlock your login keyring, then retry; stored credentials were not read',
        },
      })
    }
    if (this.options.mode === 'keychain') {
      throw new AgentError('E_CONFIG', 'no OS keychain is available and --require-keychain forbids the file fallback', {
        details: {
          reason: 'keychain_unavailable',
          fix: 'start a Secret Service (e.g. gnome-keyring) in this session, or allow the file with --insecure-storage',
        },
      })
    }
    const path = join(this.options.configDir, 'credentials.json')
    if (warnedFallback.has(path)) return
    warnedFallback.add(path)
    // Whole, on one line: a cut message hides the cause, and the fix is what the reader needs.
    const cause = error.message.replace(/\s+/g, ' ').trim()
    this.options.warn(
      `no OS keychain is available (${cause}); credentials are kept in ${path} (mode 0600). Fix: start a Secret Service (e.g. gnome-keyring) in this session to use the keychain, or set ${this.env.name('CREDENTIAL_STORE')}=file to use the file without this warning.`,
    )
  }

  private sessionPath(): string {
    return join(this.options.configDir, 'session.json')
  }
}

/** Whether a record's access token has not expired. */
export function isValid(record: CredentialRecord, now = Date.now()): boolean {
  return record.expires_at === null || Date.parse(record.expires_at) > now
}

export { envPrefix }
