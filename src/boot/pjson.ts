import { readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

type CommandDiscovery = { strategy?: string; target?: string; identifier?: string }
type Pjson = { oclif?: { commands?: string | CommandDiscovery } & Record<string, unknown> } & Record<string, unknown>

/**
 * The tool's package.json as oclif must see it when running from the bundle: the same, except that the explicit
 * command target is the bundle itself, so the commands come from the one loaded copy of the code. `text`: the file's
 * text when the caller has read it already.
 */
export function bundledPjson(
  root: string,
  bundle: string,
  text = readFileSync(join(root, 'package.json'), 'utf8'),
): Record<string, unknown> {
  const pjson = JSON.parse(text) as Pjson
  const commands = pjson.oclif?.commands
  const identifier = typeof commands === 'object' ? (commands.identifier ?? 'default') : 'default'
  const target = `./${relative(root, bundle).split(sep).join('/')}`
  return { ...pjson, oclif: { ...pjson.oclif, commands: { strategy: 'explicit', target, identifier } } }
}
