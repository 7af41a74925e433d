import { type Call, json } from './call.js'
import type { RefCommand } from './reference-types.js'

/** A command path's words (`job status` → `['job', 'status']`). */
export const words = (path: string) => path.split(' ')
/** The key of an argv, to find a call that already ran it. */
export const argvKey = (argv: readonly string[]) => argv.join('\u0000')
/** Whether a command cannot run without input (a required flag or argument). */
export const needsInput = (c: RefCommand) => c.params.some((p) => p.required)
/** A read verify may call blind: nothing required, one envelope (not a stream, a job or raw bytes). */
export const plainRead = (c: RefCommand) => c.type === 'read' && !needsInput(c) && !c.stream && !c.async && !c.raw

/** Exits that mean "this needs a login, an upstream, a target or a person", not "this is broken". */
export const NEEDS_STATE = new Set([3, 4, 7, 8, 9])

/**
 * The error code of a call that stopped for want of state (a login, an upstream…), whatever its output shape: the
 * last line of stdout is its error (the whole document for an envelope, the final line for NDJSON) and the exit
 * is one of {@link NEEDS_STATE}. A read and a stream stopping for the same reason are judged the same way.
 */
export function stateError(c: Call): string | undefined {
  if (!NEEDS_STATE.has(c.code ?? -1)) return undefined
  const last = c.stdout.trimEnd().split('\n').at(-1) ?? ''
  try {
    const doc = JSON.parse(last) as { ok?: unknown; error?: { code?: unknown } }
    return doc.ok === false && typeof doc.error?.code === 'string' ? doc.error.code : undefined
  } catch {
    return undefined
  }
}

/** The error of a call's envelope (its code and retryable), if it printed one. */
export function errorOf(c: Call): { code?: string; retryable?: boolean } | undefined {
  return (json(c)?.error as { code?: string; retryable?: boolean } | undefined) ?? undefined
}

/** A document without its timing, so two calls can be compared. */
export const strip = (doc: Record<string, unknown> | undefined) =>
  JSON.stringify({ ...doc, meta: { ...(doc?.meta as object), duration_ms: 0 } })

/**
 * The read commands whose plain output describes the tool's state: not its self-description, nor `mcp`, whose
 * plain run (stdin closed, no client) answers the same note whatever the state, after loading the MCP SDK: the
 * slowest call of every state read the write gate makes once per write (and once more), for nothing a comparison
 * could see.
 */
export const stateReads = (commands: RefCommand[]) =>
  commands.filter((c) => plainRead(c) && !['reference', 'context', 'doctor', 'changelog', 'mcp'].includes(c.path))

/**
 * Run `each` over `items` two at a time, answering the results in the items' order. Two, as the fuzzer always has:
 * a target's calls are mostly its start-up, and two keep both cores of a small CI runner busy without starving it.
 * Only for calls no snapshot brackets: a side-effect check must see its one call alone.
 */
export async function twoAtATime<T, R>(
  items: readonly T[],
  each: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      out[index] = await each(items[index]!, index)
    }
  }
  await Promise.all([worker(), worker()])
  return out
}
