import { spawn } from 'node:child_process'
import { chownSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { TASKS_BIN } from './helpers.js'

/** The unprivileged user `nobody`: root ignores file modes and owners, so checks of them run as this user. */
export const NOBODY = { uid: 65534, gid: 65534 } as const

/** Whether this test process may run others as `nobody` (it runs as root). */
export const CAN_SWITCH_USER = process.getuid?.() === 0

/** Run the example tool as `nobody` in a sandbox. */
export function tasksAsNobody(b: Sandbox, args: string[]): Promise<ToolRun & { ms: number }> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TASKS_BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', AGENTCLI_VALIDATE_OUTPUT: '1', ...b.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...NOBODY,
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => err.push(c))
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const stdout = Buffer.concat(out).toString('utf8')
      let json: unknown
      try {
        json = JSON.parse(stdout)
      } catch {}
      resolve({ code, signal, stdout, stderr: Buffer.concat(err).toString('utf8'), json, ms: Date.now() - started })
    })
  })
}

/** Hand the whole sandbox (or one tree of it) to `nobody`. */
export function giveToNobody(b: Sandbox, path = b.root): void {
  chownSync(path, NOBODY.uid, NOBODY.gid)
  try {
    for (const name of readdirSync(path)) giveToNobody(b, join(path, name))
  } catch {}
}
