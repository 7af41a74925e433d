import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A throw-away D-Bus session with an unlocked gnome-keyring, as a desktop login would have. */
export type Keyring = { env: { DBUS_SESSION_BUS_ADDRESS: string }; lock(): void; stop(): void }

/**
 * Start one. Needs Debian's dbus and gnome-keyring (installed by .ci/run); without them this throws, so a
 * missing keychain fails the suite instead of skipping it.
 */
export function startKeyring(): Keyring {
  const home = mkdtempSync(join(tmpdir(), 'agentcli-keyring-'))
  const env = { ...process.env, HOME: home, XDG_RUNTIME_DIR: home, XDG_DATA_HOME: join(home, 'data') }
  const [address, pid] = execFileSync('dbus-daemon', ['--session', '--fork', '--print-address=1', '--print-pid=1'], {
    env,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
  const busEnv = { ...env, DBUS_SESSION_BUS_ADDRESS: address! }
  const unlocked = spawnSync('gnome-keyring-daemon', ['--unlock', '--components=secrets'], {
    env: busEnv,
    input: 'throwaway-password',
    encoding: 'utf8',
  })
  if (unlocked.status !== 0) throw new Error(`gnome-keyring-daemon failed: ${unlocked.stderr}`)
  const keyringPid = /GNOME_KEYRING_PID=(\d+)/.exec(unlocked.stdout)?.[1]
  return {
    env: { DBUS_SESSION_BUS_ADDRESS: address! },
    lock() {
      execFileSync(
        'dbus-send',
        [
          '--session',
          '--print-reply',
          '--dest=org.freedesktop.secrets',
          '/org/freedesktop/secrets',
          'org.freedesktop.Secret.Service.Lock',
          'array:objpath:/org/freedesktop/secrets/collection/login',
        ],
        {
          env: busEnv,
          stdio: 'ignore',
        },
      )
    },
    stop() {
      for (const p of [keyringPid, pid]) {
        try {
          if (p) process.kill(Number(p), 'SIGTERM')
        } catch {}
      }
      spawnSync('pkill', ['-f', `gnome-keyring-daemon.*`], { env: busEnv, stdio: 'ignore' })
      rmSync(home, { recursive: true, force: true })
    },
  }
}
