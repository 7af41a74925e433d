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
  const all: Array<[string, MovedText]> = []
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
    all.push([id, moved])
  }
  const shared = shareFlags(all.map(([, moved]) => moved))
  const header = Object.keys(shared).length > 0 ? { ...JSON.parse(DESCRIPTIONS_HEADER), shared_flags: shared } : null
  const lines = [header ? JSON.stringify(header) : DESCRIPTIONS_HEADER]
  for (const [id, moved] of all) lines.push(`${JSON.stringify(id)}\t${JSON.stringify(moved)}`)
  const path = join(root, DESCRIPTIONS_FILE)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${lines.join('\n')}\n`)
}

/**
 * A flag definition several commands hold identically (the universal flags, on every command) is written once,
 * in the header's `shared_flags`; a command's `flags` keep its place with `0`, so the order help shows stays.
 */
function shareFlags(all: MovedText[]): Record<string, unknown> {
  const counts = new Map<string, number>()
  for (const moved of all)
    for (const [name, def] of Object.entries(moved.flags ?? {})) {
      const key = JSON.stringify([name, def])
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
  const shared: Record<string, unknown> = {}
  for (const moved of all) {
    if (!moved.flags) continue
    for (const [name, def] of Object.entries(moved.flags)) {
      const key = JSON.stringify([name, def])
      if ((counts.get(key) ?? 0) < 2) continue
      // One shared definition per name: a second variant under the same name stays with its command.
      if (!(name in shared)) shared[name] = def
      if (JSON.stringify(shared[name]) === JSON.stringify(def)) (moved.flags as Record<string, unknown>)[name] = 0
    }
  }
  return shared
}
