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
  /** The streams whose bytes are not valid UTF-8 (decoded lossily into `stdout`/`stderr`). */
  badUtf8?: Array<'stdout' | 'stderr'>
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

const strict = new TextDecoder('utf-8', { fatal: true })
const isUtf8 = (b: Buffer) => {
  try {
    strict.decode(b)
    return true
  } catch {
    return false
  }
}

/**
 * Run the target once with `args`; every call is recorded for the catalogue and timeout checks. An `env` value of
 * `undefined` removes that variable (to see what the target does without `NO_COLOR`).
 */
export function call(
  t: Target,
  label: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Call> {
  const [bin, ...pre] = t.command
  const started = Date.now()
  const merged: Record<string, string> = { ...t.env }
  for (const [k, v] of Object.entries(env))
    if (v === undefined) delete merged[k]
    else merged[k] = v
  return new Promise((resolve) => {
    const child = spawn(bin!, [...pre, ...args], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] })
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
      const [o, e] = [Buffer.concat(out), Buffer.concat(err)]
      const bad = [...(isUtf8(o) ? [] : ['stdout' as const]), ...(isUtf8(e) ? [] : ['stderr' as const])]
      const result: Call = {
        label,
        args,
        code,
        stdout: o.toString('utf8'),
        stderr: e.toString('utf8'),
        timedOut,
        ms: Date.now() - started,
        ...(bad.length ? { badUtf8: bad } : {}),
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
