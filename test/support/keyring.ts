import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive } from './helpers.js'
import { KEYRING_COMMANDS, MACHINE } from './prereqs.js'

/** A throw-away D-Bus session with an unlocked gnome-keyring, as a desktop login would have. */
export type Keyring = { env: { DBUS_SESSION_BUS_ADDRESS: string }; lock(): void; stop(): void }

const INSTALL = 'apt-get install dbus gnome-keyring'

/** Processes whose environment carries this session's private HOME: only ever ones this helper started. */
function startedWith(home: string): number[] {
  const marker = `HOME=${home}\0`
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(marker)) pids.push(Number(name))
    } catch {}
  }
  return pids
}

/** End exactly these PIDs (SIGTERM, then SIGKILL after a grace), never anything found by name. */
function endAll(pids: Iterable<number>): void {
  const list = [...new Set(pids)].filter((p) => Number.isInteger(p) && p > 1)
  for (const p of list) {
    try {
      process.kill(p, 'SIGTERM')
    } catch {}
  }
  const deadline = Date.now() + 2000
  while (list.some(alive) && Date.now() < deadline) spawnSync('sleep', ['0.05'])
  for (const p of list.filter(alive)) {
    try {
      process.kill(p, 'SIGKILL')
    } catch {}
  }
}

/** The PID that owns a name on the bus, once it has claimed it (the daemon registers shortly after start). */
function ownerPid(env: NodeJS.ProcessEnv, name: string, timeoutMs: number): number | undefined {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const r = spawnSync(
      'dbus-send',
      [
        '--session',
        '--print-reply',
        '--dest=org.freedesktop.DBus',
        '/',
        'org.freedesktop.DBus.GetConnectionUnixProcessID',
        `string:${name}`,
      ],
      { env, encoding: 'utf8' },
    )
    const pid = /uint32 (\d+)/.exec(r.stdout ?? '')?.[1]
    if (pid) return Number(pid)
    if (Date.now() > deadline) return undefined
    spawnSync('sleep', ['0.1'])
  }
}

/**
 * Start one. Needs Debian's dbus and gnome-keyring (installed by scripts/test-prereqs.sh); without them, or when
 * they fail to start, this throws saying what to install, so a missing keychain fails the suite instead of skipping
 * it.
 * Whatever happens, it leaves nothing running: it ends the processes it started (by PID), on every path.
 */
export function startKeyring(): Keyring {
  const missing = KEYRING_COMMANDS.filter((c) => !MACHINE.onPath(c))
  if (missing.length > 0)
    throw new Error(`the keychain tests need a Secret Service: ${missing.join(', ')} not found; run \`${INSTALL}\``)
  const home = mkdtempSync(join(tmpdir(), 'agentcli-keyring-'))
  const env = { ...process.env, HOME: home, XDG_RUNTIME_DIR: home, XDG_DATA_HOME: join(home, 'data') }
  const pids = new Set<number>()
  const stop = () => {
    endAll([...pids, ...startedWith(home)])
    rmSync(home, { recursive: true, force: true })
  }
  try {
    const bus = spawnSync('dbus-daemon', ['--session', '--fork', '--print-address=1', '--print-pid=1'], {
      env,
      encoding: 'utf8',
    })
    const [address, busPid] = (bus.stdout ?? '').trim().split('\n')
    if (busPid && /^\d+$/.test(busPid)) pids.add(Number(busPid))
    if (bus.status !== 0 || !address || !busPid)
      throw new Error(
        `dbus-daemon failed to start (${bus.error?.message ?? `exit ${bus.status}`}): ${bus.stderr ?? ''}; is \`${INSTALL}\` complete?`,
      )
    const busEnv = { ...env, DBUS_SESSION_BUS_ADDRESS: address }
    const unlocked = spawnSync('gnome-keyring-daemon', ['--unlock', '--components=secrets'], {
      env: busEnv,
      input: 'throwaway-password',
      encoding: 'utf8',
      timeout: 10_000,
    })
    if (unlocked.error || unlocked.status !== 0)
      throw new Error(
        `gnome-keyring-daemon failed to start (${unlocked.error?.message ?? `exit ${unlocked.status}`}): ${
          unlocked.stderr?.trim() || 'no output'
        }; run \`${INSTALL}\``,
      )
    const daemon = ownerPid(busEnv, 'org.freedesktop.secrets', 5_000)
    if (daemon === undefined)
      throw new Error(`gnome-keyring-daemon started but never offered org.freedesktop.secrets; run \`${INSTALL}\``)
    pids.add(daemon)
    return {
      env: { DBUS_SESSION_BUS_ADDRESS: address },
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
          { env: busEnv, stdio: 'ignore' },
        )
      },
      stop,
    }
  } catch (error) {
    stop()
    throw error
  }
}
