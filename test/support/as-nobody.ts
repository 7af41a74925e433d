import { chownSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { TASKS_BIN } from './helpers.js'
import { spawnRun } from './spawn-run.js'

/** The unprivileged user `nobody`: root ignores file modes and owners, so checks of them run as this user. */
export const NOBODY = { uid: 65534, gid: 65534 } as const

/** Whether this test process may run others as `nobody` (it runs as root). */
export const CAN_SWITCH_USER = process.getuid?.() === 0

/** Run the example tool as `nobody` in a sandbox. */
export function tasksAsNobody(b: Sandbox, args: string[]): Promise<ToolRun & { ms: number }> {
  return spawnRun(process.execPath, [TASKS_BIN, ...args], {
    env: { AGENTCLI_VALIDATE_OUTPUT: '1', ...b.env },
    timeoutMs: 40_000,
    ...NOBODY,
  })
}

/** Hand the whole sandbox (or one tree of it) to `nobody`. */
export function giveToNobody(b: Sandbox, path = b.root): void {
  chownSync(path, NOBODY.uid, NOBODY.gid)
  try {
    for (const name of readdirSync(path)) giveToNobody(b, join(path, name))
  } catch {}
}
