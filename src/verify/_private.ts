import { type Call, json } from './call.js'
import type { RefCommand } from './reference-types.js'

export const words = (path: string) => path.split(' ')
export const needsInput = (c: RefCommand) => c.params.some((p) => p.required)
export const plainRead = (c: RefCommand) => c.type === 'read' && !needsInput(c) && !c.stream && !c.async && !c.raw

/** Exits that mean "this needs a login, an upstream, a target or a person", not "this is broken". */
export const NEEDS_STATE = new Set([3, 4, 7, 8, 9])

export function errorOf(c: Call): { code?: string; retryable?: boolean } | undefined {
  return (json(c)?.error as { code?: string; retryable?: boolean } | undefined) ?? undefined
}

/** A document without its timing, so two calls can be compared. */
export const strip = (doc: Record<string, unknown> | undefined) =>
  JSON.stringify({ ...doc, meta: { ...(doc?.meta as object), duration_ms: 0 } })

/** The read commands whose plain output describes the tool's state (not its self-description). */
export const stateReads = (commands: RefCommand[]) =>
  commands.filter((c) => plainRead(c) && !['reference', 'context', 'doctor', 'changelog'].includes(c.path))
