import { accessSync, constants, statSync } from 'node:fs'
import { connect } from 'node:net'
import { delimiter, join } from 'node:path'

/** The programs the keychain tests start (test/support/keyring.ts): Debian's dbus and gnome-keyring. */
export const KEYRING_COMMANDS = ['dbus-daemon', 'dbus-send', 'gnome-keyring-daemon'] as const

/** What the machine must provide, each with its one line when missing (scripts/test-prereqs.sh prints the same). */
export const PREREQUISITES = {
  'dbus-daemon': { command: 'dbus-daemon', install: 'apt-get install dbus' },
  'dbus-send': { command: 'dbus-send', install: 'apt-get install dbus' },
  'gnome-keyring-daemon': { command: 'gnome-keyring-daemon', install: 'apt-get install gnome-keyring' },
  postgres: {
    name: 'PostgreSQL at 127.0.0.1:5432',
    port: 5432,
    install: 'apt-get install postgresql, started, trust auth for 127.0.0.1, a superuser role root, a database test',
  },
  redis: { name: 'Redis at 127.0.0.1:6379', port: 6379, install: 'apt-get install redis-server, started' },
} as const satisfies Record<
  string,
  { command: string; install: string } | { name: string; port: number; install: string }
>

/** One prerequisite's key in `PREREQUISITES`. */
export type Prerequisite = keyof typeof PREREQUISITES

/**
 * What each vitest project needs from the machine (vitest.config.ts names the projects). `unit` needs nothing: it
 * runs in-process and starts no keyring and connects to no database. `spawn` holds the fleet and MCP scale-out
 * tests, on the real PostgreSQL and Redis. `spawn-keychain` holds the two files that start a throw-away keyring.
 */
export const PROJECT_NEEDS: Readonly<Record<string, readonly Prerequisite[]>> = {
  spawn: ['postgres', 'redis'],
  'spawn-keychain': KEYRING_COMMANDS,
}

/** How the check looks at the machine: injected by the unit tests, `MACHINE` otherwise. */
export type Probes = {
  /** Whether `command` is an executable file on PATH (what `command -v` answers). */
  onPath(command: string): boolean
  /** Whether something accepts a TCP connection on 127.0.0.1:`port`. */
  answers(port: number): Promise<boolean>
}

/** How long a loopback connect may take: a refused one returns at once; this bounds only a port that drops it. */
const CONNECT_TIMEOUT_MS = 3000

/** The real machine: a PATH lookup and a TCP connect to loopback, a few milliseconds in all. */
export const MACHINE: Probes = {
  onPath(command) {
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (!dir) continue
      const path = join(dir, command)
      try {
        accessSync(path, constants.X_OK)
        if (statSync(path).isFile()) return true
      } catch {}
    }
    return false
  },
  answers(port) {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, timeout: CONNECT_TIMEOUT_MS })
      const done = (ok: boolean) => {
        socket.destroy()
        resolve(ok)
      }
      socket.once('connect', () => done(true))
      socket.once('timeout', () => done(false))
      socket.once('error', () => done(false))
    })
  },
}

/** The one line naming a missing prerequisite and how to install it. */
export function missingLine(id: Prerequisite): string {
  const p = PREREQUISITES[id]
  return `test prerequisite missing: ${'command' in p ? p.command : p.name} (${p.install})`
}

/** What the named projects need, each prerequisite once, in `PREREQUISITES` order. */
export function needsOf(projects: readonly string[]): Prerequisite[] {
  const wanted = new Set(projects.flatMap((name) => PROJECT_NEEDS[name] ?? []))
  return (Object.keys(PREREQUISITES) as Prerequisite[]).filter((id) => wanted.has(id))
}

/** The line of every one of `ids` the machine lacks, probed together. */
export async function missingLines(ids: readonly Prerequisite[], probes: Probes): Promise<string[]> {
  const present = await Promise.all(
    ids.map((id) => {
      const p = PREREQUISITES[id]
      return 'command' in p ? probes.onPath(p.command) : probes.answers(p.port)
    }),
  )
  return ids.filter((_, i) => !present[i]).map(missingLine)
}

/**
 * The run's check: every prerequisite the running projects lack, named at once in one error (one line each), or
 * undefined when none is missing.
 */
export async function checkPrerequisites(projects: readonly string[], probes: Probes): Promise<Error | undefined> {
  const lines = await missingLines(needsOf(projects), probes)
  if (lines.length === 0) return undefined
  const error = new Error(
    [
      'the tests need what this machine lacks (scripts/test-prereqs.sh, run as root on Debian or Ubuntu, installs it):',
      ...lines,
    ].join('\n'),
  )
  // The lines say everything: a stack into this helper would only bury them.
  error.stack = error.message
  return error
}
