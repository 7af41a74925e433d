import type { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import type { Globals } from '../globals.js'
import type { Outcome } from '../outcome.js'
import { buildMeta, type Envelope, errorBody, errorEnvelope, type Notice, successEnvelope } from './envelope.js'
import { renderStream } from './ndjson.js'
import { settleProgress } from './progress.js'
import { redact } from './redact.js'
import { writeStdout } from './stdout.js'
import { renderText, terminalText } from './text.js'
import { errorText } from './text-error.js'

/** Everything the renderer needs besides the outcome. */
export type RenderContext = {
  globals: Pick<Globals, 'format' | 'compact' | 'quiet'>
  catalogue: Catalogue
  startedAt: number
  notices: readonly Notice[]
}

/** Serialise an envelope: pretty by default, one line with `--compact`; always ends in `\n`. */
export function serialize(envelope: Envelope, compact: boolean): string {
  return `${JSON.stringify(envelope, null, compact ? 0 : 2)}\n`
}

/** Render a command's outcome; returns the exit code (0). */
export async function renderOutcome(outcome: Outcome, ctx: RenderContext): Promise<number> {
  if (outcome.kind === 'stream') return renderStream(outcome.spec, ctx)
  settleProgress()
  if (outcome.kind === 'raw') {
    const body = outcome.body
    if (typeof body === 'string' || body instanceof Uint8Array) await writeStdout(body)
    else for await (const chunk of body) await writeStdout(chunk)
    return 0
  }
  const notices = redact([...ctx.notices, ...(outcome.meta.notices ?? [])])
  const meta = buildMeta(performance.now() - ctx.startedAt, { ...redact(outcome.meta), notices })
  const data = redact(outcome.data)
  if (ctx.globals.format === 'text') {
    await writeStdout(renderText(data, terminalText()))
    if (!ctx.globals.quiet) {
      if (meta.truncation_hint) process.stderr.write(`note: ${meta.truncation_hint}\n`)
      for (const notice of notices) process.stderr.write(`note: ${String(notice.message ?? notice.type)}\n`)
    }
    return 0
  }
  await writeStdout(serialize(successEnvelope(data, outcome.schemaVersion, meta), ctx.globals.compact))
  return 0
}

/** Render a failure; returns its exit code from the catalogue. */
export async function renderError(
  error: AgentError,
  ctx: RenderContext,
  schemaVersion = '1.0',
  stream = false,
): Promise<number> {
  settleProgress()
  const { body: raw, exit } = errorBody(error, ctx.catalogue)
  const body = { ...raw, message: redact(raw.message), details: redact(raw.details) }
  if (ctx.globals.format === 'text') {
    process.stderr.write(errorText(body))
    return exit
  }
  const meta = buildMeta(performance.now() - ctx.startedAt, { notices: redact([...ctx.notices]) })
  if (stream) {
    // A stream command's stdout is NDJSON from its first byte, even when it fails before its first item.
    await writeStdout(
      `${JSON.stringify({ ok: false, schema_version: schemaVersion, type: 'error', error: body, meta })}\n`,
    )
    return exit
  }
  await writeStdout(serialize(errorEnvelope(body, schemaVersion, meta), ctx.globals.compact))
  return exit
}
