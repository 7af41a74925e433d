import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Credentials } from '../../../src/credentials/credentials.js'
import { KeychainError } from '../../../src/credentials/keychain-store.js'
import type { CredentialRecord } from '../../../src/credentials/types.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A long cause, as D-Bus gives one: a cut at 120 characters would fall inside a word. */
const CAUSE = `Platform secure storage failure: ${'org.freedesktop.DBus.Error.ServiceUnknown '.repeat(4)}was not provided by any .service files`

function store(warnings: string[]): Credentials {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-keychain-'))
  dirs.push(dir)
  const creds = new Credentials({
    bin: 'tasks',
    configDir: dir,
    mode: 'auto',
    refreshable: false,
    warn: (m) => warnings.push(m),
  })
  const unavailable = () => Promise.reject(new KeychainError('unavailable', CAUSE))
  Object.assign(creds.keychain, { get: unavailable, set: unavailable, delete: unavailable, probe: unavailable })
  return creds
}

const RECORD: CredentialRecord = {
  account: 'ann',
  access_token: 'secret-token-value',
  refresh_token: null,
  expires_at: null,
  scopes: ['read'],
}

describe('the keychain fallback warning', () => {
  it('is said once per process, whole (the cause uncut) and with the fix, however many requests read the token', async () => {
    const warnings: string[] = []
    const creds = store(warnings)
    expect(await creds.save(RECORD)).toBe('file')
    for (let i = 0; i < 5; i++) expect((await creds.read())?.source).toBe('file')
    expect(warnings).toHaveLength(1)
    const [said] = warnings
    expect(said).toContain(CAUSE)
    expect(said).toContain('credentials.json (mode 0600)')
    expect(said).toMatch(/Fix: start a Secret Service .* or set TASKS_CREDENTIAL_STORE=file to use the file/)
    expect(said).not.toContain('secret-token-value')
  })
})
