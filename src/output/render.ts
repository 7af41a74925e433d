import type { AgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import { runnable, runnableText } from '../runtime/invocation.js'
import { now } from './clock.js'
import { buildMeta, type Envelope, errorBody, errorEnvelope, successEnvelope } from './envelope.js'
import { isTerminal } from './is-terminal.js'
import { renderStream, whenAborted } from './ndjson.js'
import type { Outcome, RawOutcome } from './outcome.js'
import { settleProgress } from './progress.js'
import { RawScrubber, redactedJson, redactForOutput } from './redact.js'
import type { RenderContext } from './render-context.js'
import { sinksOf, stdoutOf } from './sinks.js'
import { renderText, terminalText } from './text.js'
import { errorText, NEXT_COMMANDS } from './text-error.js'
import { utcTimes } from './times.js'

export type { RenderContext } from './render-context.js'

/** Whether a render's JSON goes out on one line (see {@link oneLine}), asking the context's sinks about a TTY. */
function compactFor(ctx: RenderContext): boolean {
  const isTTY = ctx.sinks?.isTTY
  return isTTY === undefined ? oneLine(ctx.globals) : oneLine(ctx.globals, { isTTY })
}

/** Serialise an envelope, redacted: on one line or indented by two; always ends in `\n`. */
export function serialize(envelope: Envelope, compact: boolean): string {
  return `${redactedJson(envelope, compact ? 0 : 2)}\n`
}

/**
 * Whether JSON goes out on one line: `--compact` or `--pretty` decide; otherwise one line off a terminal (agents
 * pay for every byte of whitespace) and indented on one (a person reads it).
 */
export function oneLine(
  globals: { compact: boolean; pretty?: boolean },
  stdout: { isTTY?: boolean } = { isTTY: isTerminal(1) },
): boolean {
  if (globals.compact) return true
  if (globals.pretty) return false
  // fd 1 asked directly: `process.stdout` is built on first touch, and node:tty loads the stream stack.
  return !stdout.isTTY
}

/** Render a command's outcome; returns the exit code (0). */
export async function renderOutcome(outcome: Outcome, ctx: RenderContext): Promise<number> {
  if (outcome.kind === 'stream') return renderStream(outcome.spec, ctx)
  settleProgress()
  if (outcome.kind === 'raw') return renderRaw(outcome.body, ctx)
  const notices = utcTimes([...ctx.notices, ...(outcome.meta.notices ?? [])])
  const meta = buildMeta(now() - ctx.startedAt, { ...utcTimes(outcome.meta), notices })
  const data = utcTimes(outcome.data)
  const sinks = sinksOf(ctx)
  if (ctx.globals.format === 'text') {
    const { data: safeData, meta: safeMeta } = redactForOutput({ data, meta })
    await sinks.stdout(renderText(safeData, terminalText(stdoutOf(ctx))), { whole: true })
    if (!ctx.globals.quiet) {
      if (safeMeta.truncation_hint) sinks.stderr(`note: ${safeMeta.truncation_hint}\n`)
      for (const notice of safeMeta.notices ?? []) sinks.stderr(`note: ${String(notice.message ?? notice.type)}\n`)
    }
    return 0
  }
  await sinks.stdout(serialize(successEnvelope(data, outcome.schemaVersion, meta), compactFor(ctx)), { whole: true })
  return 0
}

/**
 * Raw bytes, with the secrets this process knows scrubbed out (even across chunk boundaries). As for NDJSON, one
 * race for the whole body, so a producer stuck in an await cannot outlast a signal.
 */
async function renderRaw(body: RawOutcome['body'], ctx: RenderContext): Promise<number> {
  const scrubber = new RawScrubber()
  const sinks = sinksOf(ctx)
  const write = async (bytes: Uint8Array) => {
    if (bytes.length > 0) await sinks.stdout(bytes)
  }
  if (typeof body === 'string' || body instanceof Uint8Array) await write(scrubber.push(body))
  else {
    let ended = false
    const pump = async () => {
      for await (const chunk of body) {
        if (ended || ctx.signal?.aborted) return
        await write(scrubber.push(chunk))
      }
    }
    const pumping = pump()
    // Once the signal won, a later failure of the abandoned producer is nobody's answer.
    pumping.catch(() => {})
    await (ctx.signal ? Promise.race([pumping, whenAborted(ctx.signal).catch(() => {})]) : pumping)
    ended = true
    // The scrubber's held-back tail may be the start of a secret: an interrupted body drops it.
    if (ctx.signal?.aborted) return rawInterrupted(ctx)
  }
  await write(scrubber.end())
  return 0
}

/** Raw bytes cannot carry an error line: a raw body cut short by a signal says so on stderr. */
function rawInterrupted(ctx: RenderContext): number {
  const { body, exit } = errorBody(toAgentError(ctx.signal?.reason), ctx.catalogue)
  sinksOf(ctx).stderr(`error ${body.code}: ${redactForOutput(body.message)}\n`)
  ctx.failure = body.code
  return exit
}

/** Render a failure; returns its exit code from the catalogue. */
export async function renderError(
  error: AgentError,
  ctx: RenderContext,
  schemaVersion = '1.0',
  stream = false,
): Promise<number> {
  settleProgress()
  const { body: plain, exit } = errorBody(error, ctx.catalogue)
  const raw = { ...plain, details: runnableHints(utcTimes(plain.details)) }
  const sinks = sinksOf(ctx)
  if (ctx.globals.format === 'text') {
    sinks.stderr(errorText(redactForOutput(raw)))
    return exit
  }
  const meta = buildMeta(now() - ctx.startedAt, { notices: [...ctx.notices] })
  if (stream) {
    // A stream command's stdout is NDJSON from its first byte, even when it fails before its first item.
    await sinks.stdout(
      `${redactedJson({ ok: false, schema_version: schemaVersion, type: 'error', error: raw, meta })}\n`,
    )
    return exit
  }
  await sinks.stdout(serialize(errorEnvelope(raw, schemaVersion, meta), compactFor(ctx)), { whole: true })
  return exit
}

/**
 * Next-step commands written for a tool on PATH, rewritten to start the way this process was started: the
 * command fields, and the commands a `hint` or `fix` names in backticks.
 */
function runnableHints(details: Record<string, unknown>): Record<string, unknown> {
  const out = { ...details }
  for (const key of NEXT_COMMANDS) if (typeof out[key] === 'string') out[key] = runnable(out[key] as string)
  for (const key of ['hint', 'fix']) if (typeof out[key] === 'string') out[key] = runnableText(out[key] as string)
  return out
}
