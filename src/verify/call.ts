import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, isAbsolute, join, resolve } from 'node:path'
import { endWorkers } from '../jobs/end-workers.js'
import { parseJsonObject } from '../output/json-object.js'
import { writeStderr } from '../output/stderr.js'
import { OWN_GROUP, signalGroup } from '../runtime/process-group.js'

/** What verify keeps of one stream of one call; past it the call is ended and the stream marked truncated. */
export const MAX_CALL_OUTPUT = 16 * 1024 * 1024
/** What is kept of a truncated stream. */
const EXCERPT_BYTES = 64 * 1024
/** How long a target's leftovers (children holding its stdio) may outlive it before the group is ended. */
const LEFTOVER_GRACE_MS = 1_000

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
  /** The streams that went past {@link MAX_CALL_OUTPUT}: the call was ended there. */
  truncated?: Array<'stdout' | 'stderr'>
}

/**
 * How the target is run: stdin closed, no TTY, a fresh HOME and XDG dirs and working directory, no network, a
 * timeout, its own process group (ended as a whole, by PID, when the call ends).
 */
export type Target = {
  command: string[]
  timeoutMs: number
  home: string
  /** The working directory of every call: inside the sandbox, so a target writing to `.` writes there. */
  cwd: string
  env: Record<string, string>
  calls: Call[]
  dispose(): void
}

/**
 * Prepare a sandboxed target. Network is cut by a dead proxy (the proxy variables) and, for a Node target, by a
 * preload that sends every TCP connection there (`SANDBOX_NODE_OPTIONS`), except for the loopback upstreams
 * `extraEnv.NO_PROXY` names (`sandboxEnv` in settings.ts builds both from the author's flags).
 */
export function target(command: string[], timeoutMs: number, extraEnv: Record<string, string> = {}): Target {
  const home = mkdtempSync(join(tmpdir(), 'agentcli-verify-'))
  for (const dir of ['config', 'data', 'cache', 'state', 'work']) mkdirSync(join(home, dir))
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_STATE_HOME: join(home, 'state'),
    NO_COLOR: '1',
    TERM: 'dumb',
    // A dead proxy, for a target that honours the proxy variables (curl and most HTTP clients but Node's own).
    HTTP_PROXY: 'http://127.0.0.1:9',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    // The author's settings (`sandboxEnv`: named variables, the loopback upstreams in NO_PROXY, and NODE_OPTIONS
    // with the preload that cuts a Node target's network the same way, net-cut.cts).
    ...extraEnv,
  }
  // The target is named from the caller's directory (`node examples/tasks/bin/run.js`) but runs in the sandbox's.
  const anchored = command.map((word) => (relativeFile(word) ? resolve(word) : word))
  const cwd = join(home, 'work')
  return {
    command: anchored,
    timeoutMs,
    home,
    cwd,
    env,
    calls: [],
    // A job worker a call started runs detached, past its call: it is ended first (it must not outlive verify nor
    // write into a removed home). The removal is still retried, and a home that cannot go is left with a warning,
    // never turned into the run's verdict (verify's exit 1, no check failed).
    dispose: () => {
      try {
        endWorkers(env.XDG_DATA_HOME!)
        rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 })
      } catch (error) {
        writeStderr(`agentcli verify: could not remove the sandbox ${home}: ${(error as Error).message}\n`)
      }
    },
  }
}

/** A word that names a script by its form: a path (`./x`, `../x`, `/x`) or a script's extension; never a URL. */
const SCRIPT = /^\.{0,2}\/|\.(?:[cm]?[jt]s|py|rb|sh)$/

/**
 * What of the target's command does not exist, or undefined: its program (a path, or a name on no `PATH` dir), or
 * the script its program is given first (`node bin/run.js`) when that word names a file by its form.
 */
export function missingTarget(command: string[], path = process.env.PATH ?? ''): string | undefined {
  const [program, ...rest] = command
  if (!program) return undefined
  if (/[\\/]/.test(program)) {
    if (!existsSync(resolve(program))) return program
  } else if (!path.split(delimiter).some((dir) => dir && existsSync(join(dir, program)))) return program
  const script = rest.find((w) => !w.startsWith('-'))
  if (script && !script.includes('://') && SCRIPT.test(script) && !existsSync(resolve(script))) return script
  return undefined
}

/** A word of the target's command that names a file relative to the caller's directory. */
function relativeFile(word: string): boolean {
  return !word.startsWith('-') && !isAbsolute(word) && /[\\/.]/.test(word) && existsSync(word)
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
  return new Promise((settle) => {
    // Its own process group: the timeout, an overlong output and leftovers end the target and its children alike.
    const child = spawn(bin!, [...pre, ...args], {
      env: merged,
      cwd: t.cwd,
      detached: OWN_GROUP,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const endGroup = () => signalGroup(child, 'SIGKILL')
    const out: Buffer[] = []
    const err: Buffer[] = []
    const size = { stdout: 0, stderr: 0 }
    const truncated: Array<'stdout' | 'stderr'> = []
    const collect = (name: 'stdout' | 'stderr', into: Buffer[]) => (c: Buffer) => {
      if (truncated.includes(name)) return
      const room = MAX_CALL_OUTPUT - size[name]
      into.push(c.length > room ? c.subarray(0, room) : c)
      size[name] += Math.min(c.length, room)
      if (c.length > room) {
        truncated.push(name)
        endGroup()
      }
    }
    child.stdout.on('data', collect('stdout', out))
    child.stderr.on('data', collect('stderr', err))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      endGroup()
    }, t.timeoutMs)
    // A child that exits while something it started still holds its stdio: the leftovers are ended shortly after.
    let leftovers: NodeJS.Timeout | undefined
    child.on('exit', () => {
      leftovers = setTimeout(endGroup, LEFTOVER_GRACE_MS)
    })
    const done = (code: number | null) => {
      clearTimeout(timer)
      clearTimeout(leftovers)
      endGroup()
      const [o, e] = [Buffer.concat(out), Buffer.concat(err)]
      const bad = [...(isUtf8(o) ? [] : ['stdout' as const]), ...(isUtf8(e) ? [] : ['stderr' as const])]
      const result: Call = {
        label,
        args,
        code,
        // A truncated stream is kept only as an excerpt: the call failed anyway, and every call is kept for the report.
        stdout: (truncated.includes('stdout') ? o.subarray(0, EXCERPT_BYTES) : o).toString('utf8'),
        stderr: (truncated.includes('stderr') ? e.subarray(0, EXCERPT_BYTES) : e).toString('utf8'),
        timedOut,
        ms: Date.now() - started,
        ...(bad.length ? { badUtf8: bad } : {}),
        ...(truncated.length ? { truncated } : {}),
      }
      t.calls.push(result)
      settle(result)
    }
    child.on('error', () => done(null))
    child.on('close', (code) => done(code))
  })
}

/** The call's stdout as one JSON document, or undefined. */
export function json(c: Call): Record<string, unknown> | undefined {
  return parseJsonObject(c.stdout)
}
