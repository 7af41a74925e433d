import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { smokeTest } from '../../../src/update/smoke.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-smoke-'))
const started: number[] = []
afterEach(() => {
  // Only what these tests started, by PID, should any outlive a failing assertion.
  for (const pid of started.splice(0))
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** Whether a process of this PID still runs: gone, or a zombie its (new) parent has not reaped yet, is not. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

/** SIGKILL is delivered asynchronously: wait (bounded) for the process to stop running. */
async function stopped(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!running(pid)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

/**
 * A staged version whose `bin/run.js --version` answers correctly after starting a grandchild that would run for
 * five minutes (stdio as given: ignored, or holding the smoke run's stdout), and records the grandchild's PID.
 */
function versionLeaving(name: string, stdio: 'ignore' | 'inherit'): { dir: string; pidFile: string } {
  const dir = join(work, name)
  mkdirSync(join(dir, 'bin'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: '2.0.0', type: 'module' }))
  const pidFile = join(dir, 'grandchild.pid')
  writeFileSync(
    join(dir, 'bin', 'run.js'),
    `import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000)'], { stdio: ['ignore', '${stdio}', '${stdio}'] })
writeFileSync(${JSON.stringify(pidFile)}, String(child.pid))
child.unref()
process.stdout.write(JSON.stringify({ ok: true, data: { version: '2.0.0' } }) + '\\n')
`,
  )
  return { dir, pidFile }
}

describe('the smoke run of a new version runs in its own process group, ended whole', () => {
  it.each([
    ['detached from its output', 'ignore' as const],
    ['holding its stdout open', 'inherit' as const],
  ])('a grandchild it leaves behind (%s) is gone when the smoke run is over', async (_, stdio) => {
    const { dir, pidFile } = versionLeaving(stdio, stdio)
    await smokeTest(dir, '2.0.0', { timeoutMs: 20_000, signal: new AbortController().signal })
    const pid = Number(readFileSync(pidFile, 'utf8'))
    started.push(pid)
    expect(pid).toBeGreaterThan(0)
    expect(await stopped(pid)).toBe(true)
  })
})
