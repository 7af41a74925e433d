import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { DESCRIPTIONS_FILE, DESCRIPTIONS_HEADER, type MovedText } from '../describe/descriptions.js'

type Entry = Record<string, unknown>

/** Keys of a manifest entry that only `--help` and `reference` read. */
const MOVED = ['agent', 'description', 'examples', 'usage', 'flags', 'args'] as const

/**
 * Move what only `--help` and `reference` read (the baked `reference` description, long descriptions, examples,
 * usage, the flag and argument definitions with their texts) out of the manifest into
 * `dist/agentcli.descriptions.json`: the manifest is parsed on every start, so it must not grow with the
 * documentation (nor repeat the universal flags per command). Summaries stay: command lists show them. Parsing
 * reads the command classes, never these cached definitions.
 */
export function splitDescriptions(root: string, manifest: { commands: Record<string, Entry> }): void {
  const lines = [DESCRIPTIONS_HEADER]
  for (const [id, entry] of Object.entries(manifest.commands)) {
    const moved: MovedText = {}
    for (const key of MOVED)
      if (entry[key] !== undefined) {
        ;(moved as Entry)[key] = entry[key]
        delete entry[key]
      }
    // oclif iterates these (flexible taxonomy): empty, not absent, until help puts them back.
    entry.flags = {}
    entry.args = {}
    lines.push(`${JSON.stringify(id)}\t${JSON.stringify(moved)}`)
  }
  const path = join(root, DESCRIPTIONS_FILE)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${lines.join('\n')}\n`)
}
