import { spawnSync } from 'node:child_process'

/** What a child process left behind. */
export type Ran = { status: number | null; stdout: string; stderr: string }

/**
 * Run npm (npm.cmd on Windows, which only starts through a shell) with a hard timeout, so that a stuck registry
 * fails the release job instead of hanging it. npm's configuration (registry, cache, auth) comes from its own
 * environment and `.npmrc`, as on any runner.
 */
export function npm(args: string[], cwd: string, timeoutMs = 10 * 60_000): Ran {
  const windows = process.platform === 'win32'
  // A shell joins arguments unquoted: quote the ones (paths) that hold spaces.
  const argv = windows ? args.map((a) => (/[\s"]/.test(a) ? `"${a.replace(/"/g, '\\"')}"` : a)) : args
  const r = spawnSync(windows ? 'npm.cmd' : 'npm', argv, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
    shell: windows,
    maxBuffer: 64 * 1024 * 1024,
  })
  if (r.error) throw new Error(`npm ${args[0]} could not run: ${r.error.message}`)
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Fail with npm's own last words. */
export function npmOrThrow(args: string[], cwd: string): string {
  const r = npm(args, cwd)
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} failed (exit ${r.status}):\n${r.stderr.slice(-4000)}`)
  return r.stdout
}
