import type { AgentError } from '../../src/errors/agent-error.js'
import { CORE_CATALOGUE } from '../../src/errors/catalogue.js'
import { now } from '../../src/output/clock.js'
import type { Outcome } from '../../src/output/outcome.js'
import { type RenderContext, renderError, renderOutcome } from '../../src/output/render.js'
import { type MemorySinks, memorySinks } from '../../src/output/sinks.js'

/** What an in-process render printed: stdout and stderr as a run would have, and its exit code. */
export type Rendered = { code: number; stdout: string; stderr: string; failure: string | undefined }

/** Options of an in-process render. */
export type RenderOptions = Partial<Pick<RenderContext, 'notices' | 'signal' | 'catalogue'>> & {
  format?: 'json' | 'text'
  compact?: boolean
  pretty?: boolean
  quiet?: boolean
  isTTY?: boolean
}

function context(options: RenderOptions, sinks: MemorySinks): RenderContext {
  return {
    globals: {
      format: options.format ?? 'json',
      compact: options.compact ?? false,
      quiet: options.quiet ?? false,
      ...(options.pretty === undefined ? {} : { pretty: options.pretty }),
    } as RenderContext['globals'],
    catalogue: options.catalogue ?? CORE_CATALOGUE,
    startedAt: now(),
    notices: options.notices ?? [],
    ...(options.signal ? { signal: options.signal } : {}),
    sinks,
  }
}

/** Render an outcome into memory, as `renderOutcome` would print it for a run. */
export async function renderInProcess(outcome: Outcome, options: RenderOptions = {}): Promise<Rendered> {
  const sinks = memorySinks({ isTTY: options.isTTY ?? false })
  const ctx = context(options, sinks)
  const code = await renderOutcome(outcome, ctx)
  return { code, stdout: sinks.out(), stderr: sinks.err(), failure: ctx.failure }
}

/** Render a failure into memory, as `renderError` would print it for a run. */
export async function renderErrorInProcess(
  error: AgentError,
  options: RenderOptions & { schemaVersion?: string; stream?: boolean } = {},
): Promise<Rendered> {
  const sinks = memorySinks({ isTTY: options.isTTY ?? false })
  const ctx = context(options, sinks)
  const code = await renderError(error, ctx, options.schemaVersion, options.stream)
  return { code, stdout: sinks.out(), stderr: sinks.err(), failure: ctx.failure }
}

/** A rendered envelope with its run-dependent `meta.duration_ms` pinned to 0, for exact comparisons. */
export function pinned(stdout: string): string {
  return stdout.replace(/("duration_ms":\s?)\d+/g, (_, key: string) => `${key}0`)
}
