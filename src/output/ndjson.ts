import type { AgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import { ChunkWriter } from './chunk-writer.js'
import { now } from './clock.js'
import { errorBody } from './envelope.js'
import type { FieldPaths } from './fields.js'
import { projectObject } from './fields.js'
import { settleProgress } from './progress.js'
import { mayNeedRedaction, redactedJson, redactForOutput } from './redact.js'
import type { RenderContext } from './render-context.js'
import { sinksOf, stdoutOf } from './sinks.js'
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
  const sinks = sinksOf(ctx)
  const out = new ChunkWriter(sinks.stdout)
  const text = ctx.globals.format === 'text'
  const rows = text ? new TextRows(terminalText(stdoutOf(ctx))) : undefined
  const item = itemLines(spec.schemaVersion)
  let count = 0
  const iterator = spec.items[Symbol.asyncIterator]()
  // Set once the stream's end is decided: the pump then writes nothing more, so the last line is ours alone.
  let ended = false
  // The pump is a chain of callbacks, not an `await` loop: an `await` allocates its resume closures and context
  // every time, ≈ 100 bytes an item, enough more garbage that V8 doubles its young generation before a million
  // items (peak RSS). Each step still runs in its own microtask, so the stack stays flat.
  const pump = () =>
    new Promise<AgentError | 'closed' | undefined>((resolve) => {
      const fail = (error: unknown) => resolve(toAgentError(error))
      const pull = (): void => {
        try {
          if (ended) {
            resolve(undefined)
            return
          }
          if (sinks.closed()) {
            Promise.resolve(iterator.return?.()).then(() => resolve('closed'), fail)
            return
          }
          if (ctx.signal?.aborted) throw ctx.signal.reason
          // Promise.resolve: a hand-written iterator may answer with a plain result (no cost for a promise).
          Promise.resolve(iterator.next()).then(step, fail)
        } catch (error) {
          fail(error)
        }
      }
      const step = (next: IteratorResult<unknown>): void => {
        try {
          if (ended || next.done) {
            resolve(undefined)
            return
          }
          const data = utcTimes(spec.fields ? projectObject(next.value, spec.fields) : next.value)
          count++
          let written: Promise<void> | undefined
          if (rows) {
            const lines = rows.push(redactForOutput(data))
            if (lines) written = out.push(lines)
          } else written = item(out, data)
          // Waited for only when a chunk went out: most items cost no promise of their own.
          if (written) written.then(pull, fail)
          else pull()
        } catch (error) {
          fail(error)
        }
      }
      pull()
    })
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
      sinks.stderr(errorText(redactForOutput(safe)))
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

const LINE_END = Buffer.from('}\n')

/**
 * The writer of a stream's `item` lines. A line is `{"ok":true,"schema_version":…,"type":"item","data":` + the
 * item's JSON + `}`: the head is the same for every item and proven clean once, so per item only the data is
 * stringified and only its JSON passes the redactor's prefilter. What redaction can change (keys, strings and
 * values under sensitive keys) lies wholly inside that JSON, so a clean one means the line `redactedJson` would
 * give, byte for byte. A suspect item, or one the shortcut cannot stringify alone (a `toJSON` sees its key),
 * takes `redactedJson` of the whole line, as every item did before.
 */
function itemLines(schemaVersion: string): (out: ChunkWriter, data: unknown) => Promise<void> | undefined {
  const line = (data: unknown) => ({ ok: true, schema_version: schemaVersion, type: 'item', data })
  const probe = JSON.stringify(line(0))
  const fast = probe.endsWith(',"data":0}') && !mayNeedRedaction(probe)
  const head = Buffer.from(probe.slice(0, -2))
  return (out, data) => {
    let json: string | undefined
    if (fast && typeof (data as { toJSON?: unknown } | null | undefined)?.toJSON !== 'function') {
      try {
        json = JSON.stringify(data)
      } catch {
        // Not serialisable (a cycle, a BigInt): the full path below fails with the error it always gave.
      }
    }
    if (json === undefined || mayNeedRedaction(json)) return out.push(`${redactedJson(line(data))}\n`)
    return out.push(json, head, LINE_END)
  }
}
