import type { AgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import { now } from './clock.js'
import { errorBody } from './envelope.js'
import type { FieldPaths } from './fields.js'
import { projectObject } from './fields.js'
import { settleProgress } from './progress.js'
import { redactedJson, redactForOutput } from './redact.js'
import type { RenderContext } from './render.js'
import { stdoutClosed, writeStdout } from './stdout.js'
import { terminalText } from './text.js'
import { errorText } from './text-error.js'
import { TextRows } from './text-rows.js'
import { utcTimes } from './times.js'

/** Rejects with the signal's reason once it aborts (never resolves); handled, so it never goes unhandled. */
export function whenAborted(signal: AbortSignal): Promise<never> {
  const promise = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason)
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
  promise.catch(() => {})
  return promise
}

/** One line of a stream (spec 002 §5). */
export type StreamLine =
  | { ok: true; schema_version: string; type: 'item'; data: unknown }
  | { ok: true; schema_version: string; type: 'summary'; data: Record<string, unknown>; meta: { duration_ms: number } }
  | { ok: false; schema_version: string; type: 'error'; error: unknown; meta: { duration_ms: number } }

const CHUNK = 64 * 1024

/** Collects lines into chunks and writes them with backpressure: memory stays flat however long the stream. */
class LineWriter {
  private buffer = ''
  async push(line: string): Promise<void> {
    this.buffer += line
    if (this.buffer.length >= CHUNK) await this.flush()
  }
  async flush(): Promise<void> {
    if (!this.buffer) return
    const chunk = this.buffer
    this.buffer = ''
    await writeStdout(chunk)
    // Writes to a file or /dev/null finish synchronously; without a turn of the event loop a long stream would
    // starve signal handlers (Ctrl-C) and timers until the end.
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** What a stream hands the renderer. */
export type StreamSpec = {
  items: AsyncIterable<unknown>
  schemaVersion: string
  fields: FieldPaths | undefined
  /** Extra members of the summary line besides `count`. */
  summary?: () => Record<string, unknown>
}

/**
 * Render a stream as NDJSON: one `item` line per element, then a `summary` line, or an `error` line with the
 * catalogue's exit code if the producer fails part-way. A closed pipe stops the producer quietly.
 */
export async function renderStream(spec: StreamSpec, ctx: RenderContext): Promise<number> {
  const out = new LineWriter()
  const text = ctx.globals.format === 'text'
  const rows = text ? new TextRows(terminalText()) : undefined
  let count = 0
  const iterator = spec.items[Symbol.asyncIterator]()
  // Set once the stream's end is decided: the pump then writes nothing more, so the last line is ours alone.
  let ended = false
  const pump = async (): Promise<AgentError | 'closed' | undefined> => {
    try {
      for (;;) {
        if (ended) return undefined
        if (stdoutClosed()) {
          await iterator.return?.()
          return 'closed'
        }
        if (ctx.signal?.aborted) throw ctx.signal.reason
        const next = await iterator.next()
        if (ended || next.done) return undefined
        const data = utcTimes(spec.fields ? projectObject(next.value, spec.fields) : next.value)
        count++
        if (rows) {
          const lines = rows.push(redactForOutput(data))
          if (lines) await out.push(lines)
        } else {
          // One JSON.stringify per clean item: the redactor's prefilter proves most lines clean without a walk.
          await out.push(`${redactedJson({ ok: true, schema_version: spec.schemaVersion, type: 'item', data })}\n`)
        }
      }
    } catch (error) {
      return toAgentError(error)
    }
  }
  // One race for the whole stream, not one per item (that cost ≈ 1 µs an item and a reaction on the signal each):
  // a producer stuck in an await cannot hold the error line back past a signal.
  const interrupted = ctx.signal ? whenAborted(ctx.signal).catch((reason: unknown) => toAgentError(reason)) : undefined
  const result = interrupted ? await Promise.race([pump(), interrupted]) : await pump()
  ended = true
  if (result === 'closed') return 0
  const failure = result
  // Not awaited: a producer stuck in an await would hold the error line back.
  if (ctx.signal?.aborted) void Promise.resolve(iterator.return?.()).catch(() => {})
  const meta = { duration_ms: Math.round(now() - ctx.startedAt) }
  if (failure) {
    settleProgress()
    const { body, exit } = errorBody(failure, ctx.catalogue)
    ctx.failure = body.code
    const safe = { ...body, details: utcTimes(body.details) }
    if (rows) {
      await out.push(rows.end())
      await out.flush()
      process.stderr.write(errorText(redactForOutput(safe)))
    } else
      await out.push(
        `${redactedJson({ ok: false, schema_version: spec.schemaVersion, type: 'error', error: safe, meta })}\n`,
      )
    await out.flush()
    return exit
  }
  const summary = { count, ...(spec.summary?.() ?? {}) }
  if (rows) await out.push(rows.end())
  if (!text)
    await out.push(
      `${redactedJson({ ok: true, schema_version: spec.schemaVersion, type: 'summary', data: summary, meta })}\n`,
    )
  await out.flush()
  return 0
}
