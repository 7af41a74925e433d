import { type SpawnOptions, spawn } from 'node:child_process'
import type { ToolRun } from 'agentcli/testing'

/** Options of {@link spawnRun}: the environment over a bare `PATH` and `NO_COLOR=1`, the kill time, where, as whom. */
export type SpawnRunOptions = {
  env?: Record<string, string>
  timeoutMs: number
} & Pick<SpawnOptions, 'cwd' | 'uid' | 'gid'>

/**
 * `runTool` for what it cannot start: any program (another Node, a Node as another user), stdin closed, colour off.
 * Async, so a server of the test process (a mock upstream) keeps answering while it runs. `ms`: how long it ran.
 */
export function spawnRun(
  program: string,
  args: readonly string[],
  { env = {}, timeoutMs, ...where }: SpawnRunOptions,
): Promise<ToolRun & { ms: number }> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...where,
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => err.push(c))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
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
