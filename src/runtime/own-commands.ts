import { builtin } from '../boot/builtin.js'
import { bundledPjson } from '../boot/pjson.js'
import { rootPath } from '../boot/root-path.js'
import { idDepth, leadingWords, longestMatch } from '../route/match.js'
import { BaseCommand } from './base-command.js'
import type { ToolConfig, ToolPjson } from './tool-config.js'

const { readFileSync, statSync } = builtin<typeof import('node:fs')>('node:fs')
const Module = builtin<typeof import('node:module')>('node:module')
const { join } = builtin<typeof import('node:path')>('node:path')
const { pathToFileURL } = builtin<typeof import('node:url')>('node:url')

/** The export of a bundle that lists every alias of its commands (written by `agentcli-build`). */
export const ALIASES_EXPORT = 'AGENTCLI_ALIASES'

/** The export of a bundle that lists its hidden commands' ids (written by `agentcli-build`). */
export const HIDDEN_EXPORT = 'AGENTCLI_HIDDEN'

/** A command class of the tool's own map, on agentcli's base, as the entry runs it. */
export type OwnCommand = typeof BaseCommand & { schemaVersion?: unknown; stream?: unknown; kind?: unknown }

/** A run of one of the tool's own commands: the class, the id it was found under, the arguments after the id. */
export type OwnRoute = { command: OwnCommand; id: string; rest: string[] }

/**
 * Words that name no command of a tool whose map is every command it has: the visible commands as people write
 * them (`job status`), in the map's order, for the router's `E_USAGE` (`unknownCommand`).
 */
export type NoRoute = { unknown: string[] }

type Discovery = { strategy?: string; target?: string; identifier?: string }

/**
 * The tool's root and package.json; from a bundle, with the bundle as the explicit command target. `reuse`: the
 * caller runs many times in one process (an in-process run: an MCP server's reads), so the file's text is kept
 * while its stat is unchanged, and so is what it parsed to: the runs of one text share one object (nothing of the
 * framework writes on it but oclif's idempotent defaults), and an edit on disk is seen by the next run.
 */
export function readPjson(
  root: string | URL,
  bundle: string | undefined,
  reuse = false,
): { dir: string; pjson: ToolPjson } {
  const dir = rootPath(root)
  const text = pjsonText(join(dir, 'package.json'), reuse)
  if (reuse) {
    const known = parsedKept.get(dir)
    if (known && known.text === text && known.bundle === bundle) return { dir, pjson: known.pjson }
  }
  const pjson = (bundle ? bundledPjson(dir, bundle, text) : JSON.parse(text)) as ToolPjson
  if (reuse) {
    if (parsedKept.size >= 16) parsedKept.clear()
    parsedKept.set(dir, { text, bundle, pjson })
  }
  return { dir, pjson }
}

/** What the last package.json text read with `reuse` parsed to, by root (with the bundle it was read for). */
const parsedKept = new Map<string, { text: string; bundle: string | undefined; pjson: ToolPjson }>()

/** The last package.json text read with `reuse`, by path, with the stat it was read at. */
const kept = new Map<string, { stamp: string; text: string }>()

function pjsonText(path: string, reuse: boolean): string {
  if (!reuse) return readFileSync(path, 'utf8')
  const stat = statSync(path, { throwIfNoEntry: false })
  // Missing (or not a file): the read below fails as it would without the cache.
  if (!stat?.isFile()) return readFileSync(path, 'utf8')
  const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
  const known = kept.get(path)
  if (known?.stamp === stamp) return known.text
  const text = readFileSync(path, 'utf8')
  if (kept.size >= 16) kept.clear()
  kept.set(path, { stamp, text })
  return text
}

/** Whether argv asks for help (`--help`/`-h` before any `--`). */
export function helpRequested(argv: readonly string[]): boolean {
  for (const token of argv) {
    if (token === '--') return false
    if (token === '--help' || token === '-h') return true
  }
  return false
}

/**
 * The route of argv among the tool's own command map (oclif's explicit strategy), by the router's one rule; or
 * undefined when oclif's `Config` must find it: a tool that discovers commands otherwise or declares hooks or
 * plugins, a word that names an alias, a class that is not on agentcli's base, or `help` (oclif's `help <command>`).
 * The class is told apart by identity (its prototype chain reaches this `BaseCommand`), never by name or shape.
 * Words that name nothing at all are {@link NoRoute}: with no plugin, the map is every command oclif would know.
 */
export async function ownRoute(
  config: ToolConfig,
  argv: readonly string[],
  bundle?: string,
): Promise<OwnRoute | NoRoute | undefined> {
  const oclif = config.pjson.oclif ?? {}
  const hooks = oclif.hooks as Record<string, unknown> | undefined
  if ((hooks && Object.keys(hooks).length > 0) || (oclif.plugins as unknown[] | undefined)?.length) return undefined
  if (oclif.flexibleTaxonomy) return undefined
  const words = leadingWords(argv)
  if (words.length === 0) return undefined
  const map = await commandMap(config.root, oclif.commands, bundle)
  if (!map) return undefined
  const match = longestMatch(
    words,
    (id) => (Object.hasOwn(map.commands, id) ? 'own' : map.aliases.has(id) ? 'alias' : undefined),
    map.depth,
  )
  if (!match) return noRoute(map, words)
  if (match.found !== 'own') return undefined
  const command = commandOf(map, match.id)
  if (typeof command !== 'function' || !(command.prototype instanceof BaseCommand)) return undefined
  return { command: command as OwnCommand, id: match.id, rest: argv.slice(match.words) }
}

/** The visible commands, when the map says which are hidden; not for `help`, which oclif reads as a request for help. */
function noRoute(map: CommandMap, words: readonly string[]): NoRoute | undefined {
  if (!map.hidden || words[0] === 'help') return undefined
  const hidden = map.hidden
  return {
    unknown: Object.keys(map.commands)
      .filter((id) => !hidden.has(id))
      .map((id) => id.replaceAll(':', ' ')),
  }
}

/**
 * A loaded command map: its commands, aliases and hidden ids (unknown for a bundle built before the build listed
 * them), the most words an id or alias has, and each command read so far (a bundle's map entry is a getter that
 * copies the command's module namespace on every read).
 */
type CommandMap = {
  commands: Record<string, unknown>
  aliases: Set<string>
  hidden: Set<string> | undefined
  depth: number
  read: Map<string, unknown>
}

/** The command `id` of `map`, read from the map once per loaded module (the module cache holds the same class). */
function commandOf(map: CommandMap, id: string): unknown {
  if (map.read.has(id)) return map.read.get(id)
  const command = map.commands[id]
  map.read.set(id, command)
  return command
}

/**
 * Command maps by module and export: a module, once loaded, is the same object for every later run of this process
 * (Node's module cache), so an in-process caller running many calls reads its map once.
 */
const maps = new Map<string, CommandMap>()

async function commandMap(root: string, discovery: unknown, bundle?: string): Promise<CommandMap | undefined> {
  const explicit = discovery as Discovery | undefined
  if (typeof explicit !== 'object' || explicit.strategy !== 'explicit' || !explicit.target) return undefined
  const identifier = explicit.identifier ?? 'default'
  const target = join(root, explicit.target)
  const key = `${bundle ? 'bundle' : 'module'}\0${target}\0${identifier}`
  const known = maps.get(key)
  if (known) return known
  const map = await loadCommandMap(target, identifier, bundle)
  if (map) maps.set(key, map)
  return map
}

async function loadCommandMap(target: string, identifier: string, bundle?: string): Promise<CommandMap | undefined> {
  // The bundle is already loaded, registered under its own path (as oclif would `require` it).
  const module = (bundle ? Module.createRequire(target)(target) : await import(pathToFileURL(target).href)) as Record<
    string,
    unknown
  >
  const commands = module[identifier] as Record<string, unknown> | undefined
  if (!commands || typeof commands !== 'object') return undefined
  const listed = module[ALIASES_EXPORT] as string[] | undefined
  // From a bundle, the build listed the aliases (reading them here would evaluate every command's module).
  const aliases = new Set(listed ?? (bundle ? [] : Object.values(commands).flatMap(aliasesOf)))
  const hiddenListed = module[HIDDEN_EXPORT] as string[] | undefined
  const hidden = hiddenListed
    ? new Set(hiddenListed)
    : bundle
      ? undefined
      : new Set(Object.keys(commands).filter((id) => isHidden(commands[id])))
  return { commands, aliases, hidden, depth: idDepth([...Object.keys(commands), ...aliases]), read: new Map() }
}

/** Whether a command class is hidden (oclif's `static hidden`). */
export function isHidden(command: unknown): boolean {
  return Boolean((command as { hidden?: unknown } | undefined)?.hidden)
}

function aliasesOf(command: unknown): string[] {
  const c = command as { aliases?: string[]; hiddenAliases?: string[] } | undefined
  return [...(c?.aliases ?? []), ...(c?.hiddenAliases ?? [])]
}
