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

/** The descriptions file: format version and the moved texts by command id. */
export type Descriptions = { version: 1; commands: Record<string, MovedText> }

const files = new Map<string, Descriptions | undefined>()

/** The descriptions file of a plugin root (undefined when it has none: an older build, or no build at all). */
export function readDescriptions(root: string): Descriptions | undefined {
  if (!files.has(root)) {
    let parsed: Descriptions | undefined
    try {
      parsed = JSON.parse(readFileSync(join(root, DESCRIPTIONS_FILE), 'utf8')) as Descriptions
    } catch {
      parsed = undefined
    }
    files.set(root, parsed?.version === 1 ? parsed : undefined)
  }
  return files.get(root)
}

type Cached = Command.Loadable & MovedText

function movedText(config: Config, cmd: Command.Loadable): MovedText | undefined {
  const root = (cmd.pluginName ? config.plugins.get(cmd.pluginName)?.root : undefined) ?? config.root
  return readDescriptions(root)?.commands[cmd.id]
}

/** A command's baked `reference` description: in its manifest entry (older builds) or in the descriptions file. */
export function bakedDescription(config: Config, cmd: Command.Loadable): CommandDescription | undefined {
  return (cmd as Cached).agent ?? movedText(config, cmd)?.agent
}

/** Put the moved texts back into the commands oclif holds, so help reads them as if the manifest had them. */
export function restoreHelpText(config: Config): void {
  for (const cmd of config.commands as Cached[]) {
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
