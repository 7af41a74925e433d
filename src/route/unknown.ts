import { usageError } from '../errors/agent-error.js'
import { suggest } from '../errors/suggest.js'

/**
 * The answer to words that name no command (the router's miss, on every surface): a topic without a command, or
 * a word that names nothing, is `E_USAGE` with the commands it could have meant (`allowed`, `suggestions`).
 * `names` are the visible commands as people write them (`job status`); `hint` is for a call that named none.
 */
export function unknownCommand(words: readonly string[], names: readonly string[], hint: string): never {
  const sorted = [...names].sort()
  if (words.length === 0) throw usageError('No command given', { allowed: sorted, hint })
  for (let n = words.length; n > 0; n--) {
    const topic = words.slice(0, n).join(' ')
    const under = sorted.filter((name) => name.startsWith(`${topic} `))
    if (under.length > 0) {
      const got = words.slice(0, n + 1).join(' ')
      const message = n === words.length ? `${topic} is a topic; name one of its commands` : `Unknown command: ${got}`
      return throwUsage(message, got, under, suggest(got, under))
    }
  }
  const got = words.join(' ')
  const suggestions = [...new Set([...suggest(got, names), ...suggest(words[0]!, names)])].slice(0, 3)
  return throwUsage(`Unknown command: ${got}`, got, sorted, suggestions)
}

/** `Did you mean 'a' or 'b'?` after the message, and the same in `details`. */
export function didYouMean(message: string, suggestions: readonly string[]): string {
  const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `'${s}'`).join(' or ')}?` : ''
  return `${message}.${hint}`
}

function throwUsage(message: string, got: string, allowed: string[], suggestions: string[]): never {
  throw usageError(didYouMean(message, suggestions), { got, allowed, suggestions })
}
