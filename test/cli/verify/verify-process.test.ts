import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { env, ROOT } from '../../support/helpers.js'

const AGENTCLI = join(ROOT, 'bin/agentcli.js')
const work = mkdtempSync(join(tmpdir(), 'agentcli-verify-process-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** Whether a process of this PID still runs: gone, or a zombie its (new) parent has not reaped yet, is not. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state …"; Z is a zombie (dead, its exit status not collected).
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
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

/** A target script: `body` runs for every call, with `log` the path of a file it may append to. */
function targetScript(name: string, body: string): { script: string; log: string } {
  const script = join(work, `${name}.mjs`)
  const log = join(work, `${name}.log`)
  writeFileSync(
    script,
    `import { spawn } from 'node:child_process'\nimport { appendFileSync, existsSync } from 'node:fs'\nconst log = ${JSON.stringify(log)}\n${body}\n`,
  )
  return { script, log }
}

describe('verify runs each call of the target in its own process group, in a sandbox', () => {
  it('ends a grandchild that holds the target’s stdout, by its group, and still reports', async () => {
    // The first call leaves a child behind that keeps stdout open and would sleep for five minutes.
    const { script, log } = targetScript(
      'leaver',
      `if (!existsSync(log)) {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000)'], { stdio: ['ignore', 'inherit', 'inherit'] })
  appendFileSync(log, child.pid + '\\n')
}
process.stdout.write('{}\\n')`,
    )
    const junit = join(work, 'leaver.xml')
    const run = await runTool(
      AGENTCLI,
      ['verify', '--timeout-ms', '2000', '--junit', junit, '--', process.execPath, script],
      { timeoutMs: 240_000 },
    )
    expect(env(run).error.code).toBe('E_CONFORMANCE')
    expect(existsSync(junit)).toBe(true)
    const [pid] = readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number)
    expect(pid).toBeGreaterThan(0)
    expect(await stopped(pid!)).toBe(true)
  }, 300_000)

  it('stops reading a target that prints without end, and writes its reports', async () => {
    // 64 KiB lines forever: past verify's bound per call, the call is ended, not held in memory.
    const { script } = targetScript(
      'flood',
      `const line = 'x'.repeat(65535) + '\\n'
const write = () => { while (process.stdout.write(line)) {} process.stdout.once('drain', write) }
write()`,
    )
    const sarif = join(work, 'flood.sarif')
    const run = await runTool(
      AGENTCLI,
      ['verify', '--timeout-ms', '20000', '--sarif', sarif, '--', process.execPath, script],
      {
        timeoutMs: 240_000,
      },
    )
    expect(env(run).error.code).toBe('E_CONFORMANCE')
    expect(existsSync(sarif)).toBe(true)
  }, 300_000)

  it('runs the target in a working directory of its own: a target that writes to `.` writes into the sandbox', async () => {
    const { script } = targetScript(
      'writer',
      `import { writeFileSync } from 'node:fs'
writeFileSync('left-here.txt', process.cwd())
process.stdout.write('{}\\n')`,
    )
    await runTool(AGENTCLI, ['verify', '--timeout-ms', '5000', '--', process.execPath, script], {
      timeoutMs: 240_000,
      cwd: work,
    })
    expect(existsSync(join(work, 'left-here.txt'))).toBe(false)
  }, 300_000)
})
