import { spawn } from 'node:child_process'
import { AgentError } from '../errors/agent-error.js'
import type { ErrorCode } from '../errors/catalogue.js'
import { killGraceOf } from '../mcp/children.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { runEnv } from '../settings/run-env.js'
import { toolEnv } from '../settings/tool-env.js'
import { toolStart, type Worker } from './runtime.js'

/*
 * A call job (`call: true` in its record): the resume of a person's checkpoint, which `tool mcp` starts when the
 * person answered its task. The command is not async, so it has no `work()`: the worker runs the whole command line
 * as the CLI would (its own process: the tool's audit, confirm and principal checks are that call's), and records
 * the envelope it prints, its data as the job's result or its error as the job's.
 */

/** The most a call may print before it is stopped: an envelope, not a stream. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024

/** The worker of a call job: runs `record.argv` as this tool's command line, for the record's owner. */
export function callWorker(config: ToolConfig): Worker {
  return {
    runWork: (ctx, record) =>
      new Promise((resolve, reject) => {
        const names = toolEnv(config.bin)
        // The grace `tool mcp` gives its own calls (the tool's `kill_grace_ms`): this call is one of them, resumed.
        const grace = killGraceOf(config)
        const env = { ...runEnv() }
        // One JSON envelope, whatever this worker's environment says; and the call acts for whom the job is.
        delete env[names.name('FORMAT')]
        if (record.owner) env[names.name('MCP_SUBJECT')] = record.owner
        else delete env[names.name('MCP_SUBJECT')]
        const child = spawn(process.execPath, [...toolStart(), ...record.argv], {
          env,
          stdio: ['ignore', 'pipe', 'ignore'],
        })
        const out: Buffer[] = []
        let size = 0
        let kill: NodeJS.Timeout | undefined
        const stop = () => {
          child.kill('SIGINT')
          kill ??= setTimeout(() => child.kill('SIGKILL'), grace)
          kill.unref()
        }
        child.stdout!.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > MAX_OUTPUT_BYTES) stop()
          else out.push(chunk)
        })
        const onAbort = () => stop()
        ctx.signal.addEventListener('abort', onAbort, { once: true })
        child.once('error', reject)
        child.once('close', (code) => {
          clearTimeout(kill)
          ctx.signal.removeEventListener('abort', onAbort)
          try {
            resolve(callOutcome(Buffer.concat(out).toString('utf8'), code))
          } catch (error) {
            reject(error)
          }
        })
      }),
  }
}

/**
 * What a call printed, as a job's outcome: a success envelope's data; an error envelope's error, thrown as the
 * same code, message and details; anything else (no envelope, cut short) `E_INTERNAL` with the exit code.
 */
export function callOutcome(stdout: string, exitCode: number | null): unknown {
  const envelope = lastEnvelope(stdout)
  if (envelope?.ok === true) return envelope.data ?? null
  const error = envelope?.error as { code?: unknown; message?: unknown; details?: unknown } | undefined
  if (envelope?.ok === false && typeof error?.code === 'string' && typeof error.message === 'string') {
    const details = typeof error.details === 'object' && error.details !== null ? error.details : {}
    throw new AgentError(error.code as ErrorCode, error.message, { details: details as Record<string, unknown> })
  }
  throw new AgentError('E_INTERNAL', `the resumed call printed no envelope (exit ${exitCode ?? 'by a signal'})`, {
    details: { exit_code: exitCode },
  })
}

/** The envelope of a call's output: the whole of it, or (NDJSON) its last line. */
function lastEnvelope(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trim()
  for (const candidate of [text, text.slice(text.lastIndexOf('\n') + 1)]) {
    try {
      const value = JSON.parse(candidate) as unknown
      if (typeof value === 'object' && value !== null && 'ok' in value) return value as Record<string, unknown>
    } catch {}
  }
  return undefined
}
