import { usageError } from '../errors/agent-error.js'
import { suggest } from '../errors/suggest.js'
import { idDepth, longestMatch } from '../route/match.js'
import { didYouMean } from '../route/unknown.js'
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
  const byId = new Map(commands.map((c) => [c.path.replaceAll(' ', ':'), c]))
  const tokens = words.flatMap((w) => w.split(/[\s:]+/)).filter((w) => w.length > 0)
  const depth = idDepth(byId.keys())
  const out: C[] = []
  let i = 0
  while (i < tokens.length) {
    const match = longestMatch(tokens.slice(i, i + depth), (id) => byId.get(id))
    if (!match) {
      const allowed = commands.map((c) => c.path).sort()
      const under = allowed.filter((p) => p.startsWith(`${tokens[i]} `))
      // Under a topic (`job frob`), the unknown path is the topic and the next word; else the one word.
      const got = tokens.slice(i, i + (under.length > 0 ? 2 : 1)).join(' ')
      const suggestions = [
        ...new Set([...suggest(got, allowed), ...suggest(tokens[i]!, allowed), ...under.slice(0, 3)]),
      ].slice(0, 3)
      throw usageError(didYouMean(`Unknown command path: ${got}`, suggestions), {
        got,
        allowed,
        suggestions,
        param: 'path',
      })
    }
    if (!out.includes(match.found)) out.push(match.found)
    i += match.words
  }
  return out
}
