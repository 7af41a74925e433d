/** A failure for a person: what went wrong, and the command to run next when the error names one. */

/** Details that hold a command to run, most specific first (`fix` is prose more often than a command). */
export const NEXT_COMMANDS = ['dry_run_command', 'resume', 'poll', 'reauth', 'retry_command'] as const

/** The command a person should run next, from an error's details; undefined when it names none. */
export function nextCommand(details: Record<string, unknown>): string | undefined {
  for (const key of NEXT_COMMANDS) {
    const value = details[key]
    if (typeof value === 'string' && value.trim()) return value
  }
  return undefined
}

/** The stderr lines of a text-format error: `error CODE: message`, then `next:`/`fix:`/`hint:` when known. */
export function errorText(body: { code: string; message: string; details: Record<string, unknown> }): string {
  const clean = (s: string) => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
  const lines = [`error ${body.code}: ${clean(body.message)}`]
  const { details } = body
  const next = nextCommand(details)
  if (next) lines.push(`next: ${clean(next)}`)
  if (typeof details.fix === 'string') lines.push(`fix: ${clean(details.fix)}`)
  if (typeof details.hint === 'string') lines.push(`hint: ${clean(details.hint)}`)
  const suggestions = details.suggestions
  if (Array.isArray(suggestions) && suggestions.length > 0 && !/did you mean/i.test(body.message))
    lines.push(`did you mean: ${suggestions.map(String).map(clean).join(', ')}`)
  return `${lines.join('\n')}\n`
}
