import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import config from '../../../vitest.config.js'
import {
  checkPrerequisites,
  MACHINE,
  missingLines,
  needsOf,
  PROJECT_NEEDS,
  type Prerequisite,
  type Probes,
} from '../../support/prereqs.js'

/** A machine that lacks exactly `absent` (commands by name, servers by port). */
function machineWithout(...absent: Array<string | number>): Probes & { asked: Array<string | number> } {
  const asked: Array<string | number> = []
  return {
    asked,
    onPath(command) {
      asked.push(command)
      return !absent.includes(command)
    },
    async answers(port) {
      asked.push(port)
      return !absent.includes(port)
    },
  }
}

const ALL: Prerequisite[] = ['dbus-daemon', 'dbus-send', 'gnome-keyring-daemon', 'postgres', 'redis']

const PG =
  'test prerequisite missing: PostgreSQL at 127.0.0.1:5432 (apt-get install postgresql, started, trust auth for 127.0.0.1, a superuser role root, a database test)'
const REDIS = 'test prerequisite missing: Redis at 127.0.0.1:6379 (apt-get install redis-server, started)'
const DBUS_DAEMON = 'test prerequisite missing: dbus-daemon (apt-get install dbus)'
const DBUS_SEND = 'test prerequisite missing: dbus-send (apt-get install dbus)'
const KEYRING = 'test prerequisite missing: gnome-keyring-daemon (apt-get install gnome-keyring)'

describe('the test prerequisites check', () => {
  it('names every missing one at once, one line each with its install, in a fixed order', async () => {
    const probes = machineWithout('gnome-keyring-daemon', 6379, 'dbus-daemon', 5432)
    expect(await missingLines(ALL, probes)).toEqual([DBUS_DAEMON, KEYRING, PG, REDIS])
    // Each probed once: a missing one does not stop the others being looked at.
    expect(probes.asked.sort()).toEqual([5432, 6379, 'dbus-daemon', 'dbus-send', 'gnome-keyring-daemon'])
  })

  it('a machine with everything: no line', async () => {
    expect(await missingLines(ALL, machineWithout())).toEqual([])
  })

  it('asks only about what the running projects need: nothing for unit, the servers for spawn, the keyring for spawn-keychain', async () => {
    expect(needsOf(['unit'])).toEqual([])
    expect(needsOf(['spawn'])).toEqual(['postgres', 'redis'])
    expect(needsOf(['spawn-keychain'])).toEqual(['dbus-daemon', 'dbus-send', 'gnome-keyring-daemon'])
    expect(needsOf(['unit', 'spawn-keychain', 'spawn'])).toEqual(ALL)
    const nothing = machineWithout('dbus-daemon', 'dbus-send', 'gnome-keyring-daemon', 5432, 6379)
    expect(await checkPrerequisites(['unit'], nothing)).toBeUndefined()
    expect(nothing.asked).toEqual([])
  })

  it('the run stops with one error naming all of them, one per line, and where to get them', async () => {
    const error = await checkPrerequisites(['spawn', 'spawn-keychain'], machineWithout('dbus-send', 5432, 6379))
    expect(error?.message.split('\n')).toEqual([
      'the tests need what this machine lacks (scripts/test-prereqs.sh, run as root on Debian or Ubuntu, installs it):',
      DBUS_SEND,
      PG,
      REDIS,
    ])
    // Printed as it is: no stack into the helper between the lines.
    expect(error?.stack).toBe(error?.message)
    expect(await checkPrerequisites(['spawn', 'spawn-keychain'], machineWithout())).toBeUndefined()
  })

  it('every project that needs something runs the check as its first global setup; the unit tier does not', () => {
    const projects = (config.test?.projects ?? []) as Array<{ test: { name: string; globalSetup: string[] } }>
    const names = projects.map((p) => p.test.name)
    expect(Object.keys(PROJECT_NEEDS).every((name) => names.includes(name))).toBe(true)
    for (const { test } of projects) {
      const first = test.globalSetup[0]
      if (needsOf([test.name]).length > 0) expect(first, test.name).toBe('test/support/prereqs.global.ts')
      else expect(test.globalSetup, test.name).not.toContain('test/support/prereqs.global.ts')
    }
  })
})

describe('the machine probes', () => {
  const dirs: string[] = []
  const servers: Server[] = []
  const PATH = process.env.PATH
  afterEach(async () => {
    process.env.PATH = PATH
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
  })

  it('a command is there when an executable file of that name is on PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-prereqs-'))
    dirs.push(dir)
    writeFileSync(join(dir, 'runs'), '#!/bin/sh\n', { mode: 0o755 })
    writeFileSync(join(dir, 'plain'), '', { mode: 0o644 })
    process.env.PATH = `/nonexistent::${dir}`
    expect(MACHINE.onPath('runs')).toBe(true)
    expect(MACHINE.onPath('absent')).toBe(false)
    // Root may execute nothing without an x bit either: access(X_OK) says so for a file with none.
    expect(MACHINE.onPath('plain')).toBe(false)
    chmodSync(join(dir, 'plain'), 0o755)
    expect(MACHINE.onPath('plain')).toBe(true)
  })

  it('a server is there when something accepts a connection on its loopback port', async () => {
    const server = createServer((socket) => socket.destroy())
    servers.push(server)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as { port: number }
    expect(await MACHINE.answers(port)).toBe(true)
    await new Promise((r) => server.close(r))
    servers.pop()
    // Nobody listens there now: refused at once.
    expect(await MACHINE.answers(port)).toBe(false)
  })
})
