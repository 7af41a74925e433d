import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox } from 'agentcli/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

// Credentials where no Secret Service can be reached, in-process (run(root, { io })). The keychain library reads the
// process's own environment (libdbus, zbus), not the run's: this file's worker drops every way to a session bus for
// its tests, as a child given a bare environment has none. A real keychain over D-Bus:
// test/cli/credentials/keychain.test.ts.
const box = useSandbox()
/** What a D-Bus client finds a session bus by. */
const SESSION = ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'DISPLAY'] as const
const saved: Record<string, string | undefined> = {}
beforeAll(() => {
  for (const k of SESSION) {
    saved[k] = process.env[k]
    delete process.env[k]
  }
})
afterAll(() => {
  for (const k of SESSION) if (saved[k] !== undefined) process.env[k] = saved[k]
})

async function login(b: Sandbox, flags: string[] = []) {
  const start = await tasks(b, ['login', ...flags])
  expect(start.code, start.stdout).toBe(9)
  const details = env(start).error.details
  expect((await tasks(b, ['login', 'approve', details.user_code, '--account', 'ann'])).code).toBe(0)
  return tasks(b, details.resume.split(' ').slice(1))
}

describe('without a D-Bus session', () => {
  it('falls back to the 0600 file with a warning on stderr, and says so in context and doctor', async () => {
    const done = await login(box())
    expect(env(done).data.source).toBe('file')
    expect(done.stderr).toMatch(/no OS keychain is available/)
    const dir = join(box().env.XDG_CONFIG_HOME!, 'tasks')
    expect(statSync(join(dir, 'credentials.json')).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    const ctx = await tasks(box(), ['context'])
    expect(env(ctx).data.credentials).toMatchObject({ configured: true, source: 'file' })
    const doc = await tasks(box(), ['doctor'])
    expect(env(doc).data.checks.find((c: { check: string }) => c.check === 'credentials')).toMatchObject({
      status: 'warn',
    })
    const token = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8')).accounts.ann.access_token
    expect(ctx.stdout + ctx.stderr + doc.stdout + doc.stderr + done.stdout + done.stderr).not.toContain(token)
  })

  it('--require-keychain fails closed instead', async () => {
    const done = await login(box(), ['--require-keychain'])
    expect(done.code).toBe(4)
    expect(env(done).error).toMatchObject({ code: 'E_CONFIG', details: { reason: 'keychain_unavailable' } })
  })

  it('a credentials file readable by others is refused with a fix', async () => {
    await login(box())
    const path = join(box().env.XDG_CONFIG_HOME!, 'tasks', 'credentials.json')
    const { chmodSync } = await import('node:fs')
    chmodSync(path, 0o644)
    const run = await tasks(box(), ['whoami'])
    expect(run.code).toBe(4)
    expect(env(run).error).toMatchObject({ code: 'E_CONFIG', details: { fix: `chmod 600 ${path}` } })
  })
})
