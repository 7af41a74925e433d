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
  const target = bundleTarget(root, bundle)
  return { ...pjson, oclif: { ...pjson.oclif, commands: { strategy: 'explicit', target, identifier } } }
}

/** The bundle's path as package.json names a command target, by root and bundle: the same for every run of a server. */
const targets = new Map<string, string>()

function bundleTarget(root: string, bundle: string): string {
  const key = `${root}\0${bundle}`
  let target = targets.get(key)
  if (target === undefined) {
    target = `./${relative(root, bundle).split(sep).join('/')}`
    if (targets.size >= 16) targets.clear()
    targets.set(key, target)
  }
  return target
}
