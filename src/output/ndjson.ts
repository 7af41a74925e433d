import type { AgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import { errorBody } from './envelope.js'
import type { FieldPaths } from './fields.js'
import { projectObject } from './fields.js'
import { settleProgress } from './progress.js'
import { redact } from './redact.js'
import type { RenderContext } from './render.js'
import { stdoutClosed, writeStdout } from './stdout.js'
import { terminalText } from './text.js'
import { errorText } from './text-error.js'
import { TextRows } from './text-rows.js'

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
  let failure: AgentError | undefined
  try {
    for (;;) {
      if (stdoutClosed()) {
        await iterator.return?.()
        return 0
      }
      const next = await iterator.next()
      if (next.done) break
      const data = redact(spec.fields ? projectObject(next.value, spec.fields) : next.value)
      count++
      if (rows) {
        const lines = rows.push(data)
        if (lines) await out.push(lines)
      } else {
        await out.push(`${JSON.stringify({ ok: true, schema_version: spec.schemaVersion, type: 'item', data })}\n`)
      }
    }
  } catch (error) {
    failure = toAgentError(error)
  }
  const meta = { duration_ms: Math.round(performance.now() - ctx.startedAt) }
  if (failure) {
    settleProgress()
    const { body, exit } = errorBody(failure, ctx.catalogue)
    const safe = { ...body, message: redact(body.message), details: redact(body.details) }
    if (rows) {
      await out.push(rows.end())
      await out.flush()
      process.stderr.write(errorText(safe))
    } else
      await out.push(
        `${JSON.stringify({ ok: false, schema_version: spec.schemaVersion, type: 'error', error: safe, meta })}\n`,
      )
    await out.flush()
    return exit
  }
  const summary = { count, ...(spec.summary?.() ?? {}) }
  if (rows) await out.push(rows.end())
  if (!text)
    await out.push(
      `${JSON.stringify({ ok: true, schema_version: spec.schemaVersion, type: 'summary', data: summary, meta })}\n`,
    )
  await out.flush()
  return 0
}
