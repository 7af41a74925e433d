import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** One black-box call of the target. */
export type Call = {
  label: string
  args: string[]
  code: number | null
  stdout: string
  stderr: string
  timedOut: boolean
  ms: number
}

/** How the target is run: stdin closed, no TTY, a fresh HOME and XDG dirs, no network, a timeout. */
export type Target = {
  command: string[]
  timeoutMs: number
  home: string
  env: Record<string, string>
  calls: Call[]
  dispose(): void
}

/** Prepare a sandboxed target. Network is cut by routing fetch through a dead proxy. */
export function target(command: string[], timeoutMs: number, extraEnv: Record<string, string> = {}): Target {
  const home = mkdtempSync(join(tmpdir(), 'agentcli-verify-'))
  for (const dir of ['config', 'data', 'cache', 'state']) mkdirSync(join(home, dir))
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_STATE_HOME: join(home, 'state'),
    NO_COLOR: '1',
    TERM: 'dumb',
    NODE_USE_ENV_PROXY: '1',
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    ...extraEnv,
  }
  return { command, timeoutMs, home, env, calls: [], dispose: () => rmSync(home, { recursive: true, force: true }) }
}

/** Run the target once with `args`; every call is recorded for the catalogue and timeout checks. */
export function call(t: Target, label: string, args: string[], env: Record<string, string> = {}): Promise<Call> {
  const [bin, ...pre] = t.command
  const started = Date.now()
  return new Promise((resolve) => {
    const child = spawn(bin!, [...pre, ...args], { env: { ...t.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => out.push(c))
    child.stderr.on('data', (c: Buffer) => err.push(c))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, t.timeoutMs)
    const done = (code: number | null) => {
      clearTimeout(timer)
      const result: Call = {
        label,
        args,
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
        ms: Date.now() - started,
      }
      t.calls.push(result)
      resolve(result)
    }
    child.on('error', () => done(null))
    child.on('close', (code) => done(code))
  })
}

/** The call's stdout as one JSON document, or undefined. */
export function json(c: Call): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(c.stdout) as unknown
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
