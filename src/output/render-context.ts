import type { Catalogue } from '../errors/catalogue.js'
import type { Globals } from '../universal-flags/globals.js'
import type { Notice } from './envelope.js'
import type { OutputSinks } from './sinks.js'

/** Everything the renderer needs besides the outcome. */
export type RenderContext = {
  globals: Pick<Globals, 'format' | 'compact' | 'quiet'> & { pretty?: boolean }
  catalogue: Catalogue
  startedAt: number
  notices: readonly Notice[]
  /** The run's cancellation: a stream (or raw body) stops at its next chunk once it aborts. */
  signal?: AbortSignal
  /** Set by the renderer when an outcome ends in failure part-way (a stream's error line): its code. */
  failure?: string
  /** Where to write; the process's stdout and stderr when unset. */
  sinks?: OutputSinks
}
