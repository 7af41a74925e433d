import type { CallResult } from './run-call.js'

/** Client capabilities as the SDK hands them to a handler (per request on 2026-07-28, per session before). */
export type Caps = { elicitation?: { form?: object; url?: object } } | undefined

/** Which elicitation modes the client declared (an empty elicitation object means form, per the spec). */
export function elicitModes(caps: Caps): { form: boolean; url: boolean } {
  const e = caps?.elicitation
  if (!e) return { form: false, url: false }
  const empty = Object.keys(e).length === 0
  return { form: empty || Boolean(e.form), url: Boolean(e.url) }
}

/** The approval a person gives (or not) to a previewed write. */
export const APPROVAL_SCHEMA = {
  type: 'object',
  properties: { approve: { type: 'boolean', title: 'Apply this change', default: false } },
  required: ['approve'],
} as const

/** The text a person reads before approving a write. */
export function approvalMessage(tool: string, preview: unknown): string {
  return `${tool} wants to change state. Approve this change?\n${JSON.stringify(preview, null, 2)}`
}

/** The preview and token of a successful dry run, if it was one. */
export function dryRunOf(result: CallResult): { preview: unknown; token: string } | undefined {
  const data = result.envelope.data as { preview?: unknown; confirm_token?: unknown } | undefined
  if (result.envelope.ok !== true || typeof data?.confirm_token !== 'string') return undefined
  return { preview: data.preview, token: data.confirm_token }
}

/** What a checkpoint asks of a person, from an `E_HUMAN_REQUIRED` envelope. */
export function checkpointOf(
  envelope: Record<string, unknown>,
): { message: string; url: string | undefined; resume: string } | undefined {
  const error = envelope.error as { code?: string; message?: string; details?: Record<string, unknown> } | undefined
  if (error?.code !== 'E_HUMAN_REQUIRED' || typeof error.details?.resume !== 'string') return undefined
  const url =
    typeof error.details.url === 'string' && /^https?:\/\//.test(error.details.url) ? error.details.url : undefined
  return { message: error.message ?? 'A person must act', url, resume: error.details.resume }
}

/** The SDK's builders of an elicitation request (`inputRequired.elicit`, `inputRequired.elicitUrl`). */
type ElicitBuilders = Pick<typeof import('@modelcontextprotocol/server')['inputRequired'], 'elicit' | 'elicitUrl'>

/**
 * What a checkpoint asks of the person at the client, the same in an input-required round and in a task waiting for
 * input: its page in URL mode when it has one and the client opens URLs, else a form to accept once done; undefined
 * when the client can show neither.
 */
export function checkpointRequest(
  build: ElicitBuilders,
  checkpoint: { message: string; url: string | undefined },
  modes: { form: boolean; url: boolean },
): ReturnType<ElicitBuilders['elicit']> | undefined {
  if (checkpoint.url && modes.url) return build.elicitUrl({ message: checkpoint.message, url: checkpoint.url })
  if (!modes.form) return undefined
  return build.elicit({
    message: `${checkpoint.message}. Accept once done.`,
    requestedSchema: { type: 'object', properties: { done: { type: 'boolean', title: 'Done' } } },
  })
}

/**
 * The argv of a checkpoint's `resume` command (`tasks login resume --id cp_…` → `login resume --id cp_…`). The
 * command starts with one of `prefixes`: the bin's name, or the words that start this tool again when it is not
 * on PATH (`node /abs/bin/run.js`, see `invocation()`), which a call prints when the server was started by its
 * path. It comes back from the client inside `requestState`, so it is untrusted: it must start with one of those
 * prefixes, is split into words as the shell would split what `shellQuote` wrote, and never goes through a shell,
 * so at worst it runs a command of this tool, as any tool call can.
 */
export function resumeArgv(prefixes: readonly string[], resume: string): string[] | undefined {
  const text = resume.trim()
  for (const prefix of prefixes) {
    if (!prefix || !text.startsWith(`${prefix} `)) continue
    const words = shellWords(text.slice(prefix.length))
    if (words && words.length > 0) return words
  }
  return undefined
}

/**
 * Split text into words the way a POSIX shell splits plain words and single-quoted ones (all `shellQuote`
 * writes); anything else a shell would treat specially (double quotes, `$`, backslashes, `;`, `|`, `&`, `` ` ``,
 * redirections, globs) makes it undefined: such a command was not written by this tool.
 */
export function shellWords(text: string): string[] | undefined {
  const words: string[] = []
  let word: string | undefined
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (ch === ' ' || ch === '\t') {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (ch === "'") {
      const end = text.indexOf("'", i + 1)
      if (end === -1) return undefined
      word = (word ?? '') + text.slice(i + 1, end)
      i = end
    } else if (ch === '\\' && text.slice(i, i + 2) === "\\'") {
      // `'\''`: the quoted form of a quote inside a single-quoted word.
      word = `${word ?? ''}'`
      i++
    } else if (/[\w@%+=:,./-]/.test(ch)) word = (word ?? '') + ch
    else return undefined
  }
  if (word !== undefined) words.push(word)
  return words
}
