import { bakedHelp, plainHelpHere } from '../describe/baked-help.js'
import { isTerminal } from '../output/is-terminal.js'
import { ownRoute } from './own-commands.js'
import type { ToolConfig } from './tool-config.js'

/**
 * The help the build stored for `tool <command words> --help` (or `-h`): a command of the tool's own map, found by
 * the one router, named by its words as the build wrote them, with nothing after them but help flags, asked where oclif would print it plain at 80
 * columns, from the bundle and inputs the build rendered it from (`bakedHelp`). Else undefined: oclif's `Config`
 * and help render it, as before. Either way the bytes are the same; this way loads neither.
 */
export async function storedHelp(
  config: ToolConfig,
  argv: readonly string[],
  bundle: string | undefined,
): Promise<string | undefined> {
  if (!bundle || !plainHelpHere(isTerminal(1))) return undefined
  const route = await ownRoute(config, argv, bundle)
  if (!route || 'unknown' in route || route.rest.length === 0 || !route.rest.every((a) => a === '--help' || a === '-h'))
    return undefined
  // The words exactly as the build wrote them (`job list`, never `job:list`): what oclif's help was rendered for.
  const words = argv.slice(0, argv.length - route.rest.length)
  const id = route.id.split(':')
  if (words.length !== id.length || words.some((w, i) => w !== id[i])) return undefined
  return bakedHelp(config.root, route.id)
}
