import { usageError } from '../errors/agent-error.js'
import { suggest } from '../errors/suggest.js'
import type { CommandDescription } from './command.js'

/**
 * The commands that `reference <command path…>` names, in the order named. Words are read greedily: each path
 * is the longest known command path at that point (`login status`), so several paths can follow one another
 * (`reference edit login status`); a quoted path (`"login status"`) or a colon id (`login:status`) works too.
 * A word that starts no known path is `E_USAGE` with every path as `allowed` and the closest as `suggestions`.
 */
export function selectCommands<C extends Pick<CommandDescription, 'path'>>(
  commands: readonly C[],
  words: readonly string[],
): C[] {
  const byPath = new Map(commands.map((c) => [c.path, c]))
  const tokens = words.flatMap((w) => w.split(/[\s:]+/)).filter((w) => w.length > 0)
  const out: C[] = []
  let i = 0
  while (i < tokens.length) {
    let found: C | undefined
    let n = tokens.length - i
    for (; n > 0 && !found; n--) found = byPath.get(tokens.slice(i, i + n).join(' '))
    if (!found) {
      const allowed = [...byPath.keys()].sort()
      const under = allowed.filter((p) => p.startsWith(`${tokens[i]} `))
      // Under a topic (`job frob`), the unknown path is the topic and the next word; else the one word.
      const got = tokens.slice(i, i + (under.length > 0 ? 2 : 1)).join(' ')
      const suggestions = [
        ...new Set([...suggest(got, allowed), ...suggest(tokens[i]!, allowed), ...under.slice(0, 3)]),
      ].slice(0, 3)
      const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `'${s}'`).join(' or ')}?` : ''
      throw usageError(`Unknown command path: ${got}.${hint}`, { got, allowed, suggestions, param: 'path' })
    }
    if (!out.includes(found)) out.push(found)
    i += n + 1
  }
  return out
}
