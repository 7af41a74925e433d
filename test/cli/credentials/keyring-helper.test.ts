import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { alive } from '../../support/helpers.js'
import { startKeyring } from '../../support/keyring.js'

async function gone(pid: number, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  return !alive(pid)
}

const PATH = process.env.PATH
const dirs: string[] = []
afterEach(() => {
  process.env.PATH = PATH
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A directory of stand-ins put first on PATH; `dbus-daemon` is the real one, its PID recorded in `log`. */
function stubs(files: Record<string, string>): { dir: string; log: string } {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-keyring-stubs-'))
  dirs.push(dir)
  const log = join(dir, 'dbus.out')
  const real = execFileSync('sh', ['-c', 'command -v dbus-daemon'], { encoding: 'utf8' }).trim()
  writeFileSync(join(dir, 'dbus-daemon'), `#!/bin/sh\nout=$("${real}" "$@")\necho "$out" > "${log}"\necho "$out"\n`, {
    mode: 0o755,
  })
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body, { mode: 0o755 })
  process.env.PATH = `${dir}:${PATH}`
  return { dir, log }
}

describe('the keychain test helper', () => {
  it('stops only what it started: a keyring of someone else (same program, other session) survives', async () => {
    // The bystander stands for a contributor's desktop keyring; this test started it and ends it by PID.
    const home = mkdtempSync(join(tmpdir(), 'bystander-'))
    dirs.push(home)
    const env = { ...process.env, HOME: home, XDG_RUNTIME_DIR: home }
    const [address, busPid] = execFileSync(
      'dbus-daemon',
      ['--session', '--fork', '--print-address=1', '--print-pid=1'],
      {
        env,
        encoding: 'utf8',
      },
    )
      .trim()
      .split('\n')
    spawnSync('gnome-keyring-daemon', ['--unlock', '--components=secrets'], {
      env: { ...env, DBUS_SESSION_BUS_ADDRESS: address },
      input: 'pw',
    })
    const ask = () =>
      spawnSync(
        'dbus-send',
        [
          '--session',
          '--print-reply',
          '--dest=org.freedesktop.DBus',
          '/',
          'org.freedesktop.DBus.GetConnectionUnixProcessID',
          'string:org.freedesktop.secrets',
        ],
        { env: { ...env, DBUS_SESSION_BUS_ADDRESS: address }, encoding: 'utf8' },
      ).stdout
    let owner = ask()
    for (let i = 0; i < 50 && !/uint32/.test(owner); i++) {
      await new Promise((r) => setTimeout(r, 100))
      owner = ask()
    }
    const bystander = [Number(busPid)]
    const keyringPid = /uint32 (\d+)/.exec(owner)?.[1]
    try {
      expect(Number(keyringPid)).toBeGreaterThan(1)
      const { log } = stubs({})
      const keyring = startKeyring()
      const [, ownBus] = readFileSync(log, 'utf8').trim().split('\n')
      keyring.stop()
      expect(await gone(Number(ownBus))).toBe(true)
      for (const pid of bystander) expect(alive(pid)).toBe(true)
      expect(alive(Number(keyringPid))).toBe(true)
    } finally {
      for (const pid of [...bystander, Number(keyringPid)]) {
        try {
          if (pid > 1) process.kill(pid, 'SIGTERM')
        } catch {}
      }
    }
  }, 30_000)

  it('gnome-keyring failing to start: the dbus-daemon it started is ended, and the error says what to install', async () => {
    const { log } = stubs({ 'gnome-keyring-daemon': '#!/bin/sh\necho "cannot start" >&2\nexit 1\n' })
    expect(() => startKeyring()).toThrow(
      /gnome-keyring-daemon failed to start.*cannot start.*apt-get install dbus gnome-keyring/,
    )
    const [, busPid] = readFileSync(log, 'utf8').trim().split('\n')
    expect(Number(busPid)).toBeGreaterThan(1)
    expect(await gone(Number(busPid))).toBe(true)
  })

  it('gnome-keyring missing: a clear error naming the packages, and nothing started', () => {
    const { dir, log } = stubs({})
    // A PATH with the dbus tools but no gnome-keyring-daemon.
    const tools = mkdtempSync(join(tmpdir(), 'agentcli-keyring-path-'))
    dirs.push(tools)
    for (const name of ['sh', 'dbus-send']) {
      const real = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim()
      writeFileSync(join(tools, name), `#!/bin/sh\nexec "${real}" "$@"\n`, { mode: 0o755 })
    }
    process.env.PATH = `${dir}:${tools}`
    expect(() => startKeyring()).toThrow(/gnome-keyring-daemon not found; run `apt-get install dbus gnome-keyring`/)
    expect(() => readFileSync(log)).toThrow()
  })
})
