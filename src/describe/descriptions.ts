import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Command, Config } from '@oclif/core'
import type { CommandDescription } from './command.js'

/**
 * The long texts of a tool's commands, out of its oclif manifest: every start parses the manifest, and only
 * `--help` and `reference` (with the overview and `mcp`) need these. Written by `agentcli-build` next to the
 * compiled code, read here on first need.
 */
export const DESCRIPTIONS_FILE = join('dist', 'agentcli.descriptions.json')

/** What the build moved out of one command's manifest entry. */
export type MovedText = {
  /** The command as `reference` describes it. */
  agent?: CommandDescription
  description?: string
  examples?: unknown[]
  usage?: unknown
  /** oclif's cached flag and argument definitions, as its manifest would hold them. */
  flags?: Record<string, Record<string, unknown>>
  args?: Record<string, Record<string, unknown>>
}

/**
 * The descriptions file: a first line `{"agentcli_descriptions":1}` (with `shared_flags`, the flag definitions
 * several commands hold identically), then one line per command, its id as a JSON string, a tab, and its moved
 * texts as JSON, where a flag given as `0` is the shared one of that name. One line per command so that
 * `reference <path>` and a command's `--help` parse only what they show, whatever the number of commands.
 */
export const DESCRIPTIONS_HEADER = '{"agentcli_descriptions":1}'

/** The moved texts of one plugin, each parsed on first use. */
export type Descriptions = { get(id: string): MovedText | undefined }

const files = new Map<string, Descriptions | undefined>()

/** After this many look-ups in one file, index all its lines at once (the full `reference` reads every one). */
const LOOKUPS_BEFORE_INDEX = 4

function parseFile(bytes: Buffer): Descriptions | undefined {
  const end = bytes.indexOf(0x0a)
  let header: { agentcli_descriptions?: unknown; shared_flags?: Record<string, Record<string, unknown>> }
  try {
    header = JSON.parse(bytes.toString('utf8', 0, end < 0 ? bytes.length : end))
  } catch {
    return undefined
  }
  if (header.agentcli_descriptions !== 1) return undefined
  // Each command gets its own copy of a shared flag (help writes into them); parsing the shared flag's JSON is
  // a fifth of the cost of `structuredClone`, which the full `reference` pays some 2,000 times at 1000 commands.
  const shared = new Map(Object.entries(header.shared_flags ?? {}).map(([name, def]) => [name, JSON.stringify(def)]))
  // A few look-ups (`reference <path>`, one command's help) each search the bytes for their line and decode only
  // that (the file is 1.9 MB at 1000 commands); only many look-ups decode and split it into an index, so what one
  // command costs does not grow with the number of commands.
  let lookups = 0
  let index: Map<string, string> | undefined
  const rawLine = (id: string): string | undefined => {
    if (index) return index.get(id)
    if (++lookups > LOOKUPS_BEFORE_INDEX) {
      index = new Map()
      for (const line of end < 0 ? [] : bytes.toString('utf8', end + 1).split('\n')) {
        const tab = line.indexOf('\t')
        if (tab > 0) index.set(JSON.parse(line.slice(0, tab)) as string, line.slice(tab + 1))
      }
      return index.get(id)
    }
    return descriptionLine(bytes, id).line?.toString('utf8')
  }
  const parsed = new Map<string, MovedText>()
  return {
    get(id) {
      if (!parsed.has(id)) {
        const raw = rawLine(id)
        if (raw === undefined) return undefined
        const moved = JSON.parse(raw) as MovedText
        if (moved.flags)
          for (const [name, def] of Object.entries(moved.flags))
            if ((def as unknown) === 0) moved.flags[name] = JSON.parse(shared.get(name)!)
        parsed.set(id, moved)
      }
      return parsed.get(id)
    },
  }
}

/**
 * The descriptions file's first line and the line of command `id` (without its key), as bytes of the file: found by
 * searching the bytes, whatever the file's size (one command's help or reference, and what the build stores of it).
 */
export function descriptionLine(file: Buffer, id: string): { header: Buffer; line: Buffer | undefined } {
  const end = file.indexOf(0x0a)
  const header = end < 0 ? file : file.subarray(0, end)
  const key = Buffer.from(`\n${JSON.stringify(id)}\t`)
  const at = file.indexOf(key)
  if (at < 0) return { header, line: undefined }
  const next = file.indexOf(0x0a, at + key.length)
  return { header, line: file.subarray(at + key.length, next < 0 ? undefined : next) }
}

/** The descriptions file of a plugin root (undefined when it has none: an older build, or no build at all). */
export function readDescriptions(root: string): Descriptions | undefined {
  if (!files.has(root)) {
    let bytes: Buffer | undefined
    try {
      bytes = readFileSync(join(root, DESCRIPTIONS_FILE))
    } catch {
      bytes = undefined
    }
    files.set(root, bytes === undefined ? undefined : parseFile(bytes))
  }
  return files.get(root)
}

type Cached = Command.Loadable & MovedText

function movedText(config: Config, cmd: Command.Loadable): MovedText | undefined {
  const root = (cmd.pluginName ? config.plugins.get(cmd.pluginName)?.root : undefined) ?? config.root
  return readDescriptions(root)?.get(cmd.id)
}

/** A command's baked `reference` description: in its manifest entry (older builds) or in the descriptions file. */
export function bakedDescription(config: Config, cmd: Command.Loadable): CommandDescription | undefined {
  return (cmd as Cached).agent ?? movedText(config, cmd)?.agent
}

/**
 * Put the moved texts back into the commands oclif holds, so help reads them as if the manifest had them: of the
 * one command help is about (`id`), else of every command.
 */
export function restoreHelpText(config: Config, id?: string): void {
  const found = id === undefined ? undefined : config.findCommand(id)
  for (const cmd of (found ? [found] : config.commands) as Cached[]) {
    const moved = movedText(config, cmd)
    if (!moved) continue
    const target = cmd as Record<string, unknown>
    for (const key of ['description', 'examples', 'usage'] as const)
      if (moved[key] !== undefined && target[key] === undefined) target[key] = moved[key]
    for (const key of ['flags', 'args'] as const) {
      const current = target[key] as Record<string, unknown> | undefined
      if (moved[key] && (!current || Object.keys(current).length === 0)) target[key] = moved[key]
    }
  }
}
