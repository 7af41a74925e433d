import type { Sandbox } from 'agentcli/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { keychainSecretStore } from '../../../src/credentials/keychain-store.js'
import { env, tasks, useSandbox } from '../../support/helpers.js'
import { type Keyring, startKeyring } from '../../support/keyring.js'

const box = useSandbox()
let keyring: Keyring

beforeAll(() => {
  keyring = startKeyring()
})
afterAll(() => keyring.stop())

/** Log in through the device flow (local authority), as an agent and a person would. */
async function login(b: Sandbox, extraEnv: Record<string, string | undefined>, flags: string[] = []) {
  const start = await tasks(b, ['login', ...flags], { env: extraEnv })
  expect(start.code, start.stdout).toBe(9)
  const details = env(start).error.details
  expect((await tasks(b, ['login', 'approve', details.user_code, '--account', 'ann'], { env: extraEnv })).code).toBe(0)
  return tasks(b, details.resume.split(' ').slice(1), { env: extraEnv })
}

/** Put back the test process's bus address as it was: assigning undefined to process.env would store "undefined". */
function restoreBus(saved: string | undefined): void {
  if (saved === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS
  else process.env.DBUS_SESSION_BUS_ADDRESS = saved
}

describe('the OS keychain (a real Secret Service)', () => {
  afterEach(async () => {
    const store = keychainSecretStore('tasks')
    const saved = process.env.DBUS_SESSION_BUS_ADDRESS
    process.env.DBUS_SESSION_BUS_ADDRESS = keyring.env.DBUS_SESSION_BUS_ADDRESS
    try {
      for (const account of await store.list()) await store.delete(account)
    } finally {
      restoreBus(saved)
    }
  })

  it('sets, reads, lists and deletes a token through the keychain', async () => {
    const done = await login(box(), keyring.env)
    expect(env(done).data).toEqual({ account: 'ann', logged_in: true, source: 'keychain' })
    const saved = process.env.DBUS_SESSION_BUS_ADDRESS
    process.env.DBUS_SESSION_BUS_ADDRESS = keyring.env.DBUS_SESSION_BUS_ADDRESS
    try {
      const store = keychainSecretStore('tasks')
      expect(await store.list()).toEqual(['ann'])
      const record = await store.get('ann')
      expect(record?.access_token).toMatch(/^tk_/)
      const who = await tasks(box(), ['whoami'], { env: keyring.env })
      expect(env(who).data).toMatchObject({ account: 'ann', source: 'keychain' })
      const ctx = await tasks(box(), ['context'], { env: keyring.env })
      expect(env(ctx).data.credentials).toMatchObject({ configured: true, valid: true, source: 'keychain' })
      expect(ctx.stdout + ctx.stderr + who.stdout + who.stderr).not.toContain(record!.access_token)
      const out = await tasks(box(), ['logout'], { env: keyring.env })
      expect(env(out).data).toEqual({ account: 'ann', logged_out: true, removed: true })
      expect(await store.list()).toEqual([])
      expect(await store.get('ann')).toBeUndefined()
    } finally {
      restoreBus(saved)
    }
    const after = await tasks(box(), ['context'], { env: keyring.env })
    expect(env(after).data.credentials.configured).toBe(false)
  })

  it('--insecure-storage stores in the 0600 file even when a keychain is there', async () => {
    const done = await login(box(), keyring.env, ['--insecure-storage'])
    expect(env(done).data.source).toBe('file')
  })
})

describe('a locked keyring', () => {
  it('is reported as locked, never as logged out', async () => {
    const done = await login(box(), keyring.env)
    expect(env(done).data.source).toBe('keychain')
    keyring.lock()
    // A locked keyring answers through its prompt machinery, which a loaded machine slowed past the 4 s default once
    // (E_TIMEOUT): the calls on it get the tool's setting for a slow Secret Service.
    const slow = { ...keyring.env, TASKS_KEYCHAIN_TIMEOUT_MS: '15000' }
    const who = await tasks(box(), ['whoami'], { env: slow })
    expect(who.code).toBe(4)
    expect(env(who).error).toMatchObject({ code: 'E_CONFIG', details: { reason: 'keychain_locked' } })
    const again = await tasks(box(), ['login'], { env: slow })
    expect(env(again).error.details.reason).toBe('keychain_locked')
    const doc = await tasks(box(), ['doctor'], { env: slow })
    expect(doc.code).toBe(0)
    expect(env(doc).data.checks.find((c: { check: string }) => c.check === 'credentials')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('unlock'),
    })
  })
})
