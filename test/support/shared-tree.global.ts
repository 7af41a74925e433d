import { readdirSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
/** What every worker runs at once: agentcli's build, the example tool as built, the fixture CLI's source. */
const SHARED = [
  'dist',
  'bin',
  'examples/tasks/dist',
  'examples/tasks/bin',
  'examples/tasks/skills',
  'test/fixtures/cli',
]
const SHARED_FILES = [
  'examples/tasks/package.json',
  'examples/tasks/oclif.manifest.json',
  'examples/tasks/agentcli.meta.json',
]

function stamp(): Map<string, string> {
  const out = new Map<string, string>()
  const add = (path: string): void => {
    const stat = statSync(path, { throwIfNoEntry: false })
    if (!stat) return
    if (stat.isDirectory()) for (const name of readdirSync(path)) add(join(path, name))
    else out.set(relative(ROOT, path), `${stat.size}:${stat.mtimeMs}`)
  }
  for (const part of [...SHARED, ...SHARED_FILES]) add(join(ROOT, part))
  return out
}

/**
 * A global setup of both tiers: the run fails when a test built or edited, in place, a tree the other workers are
 * running (a start then reads a half-written bundle or manifest, and every later one a cold code cache). Such a test
 * works on a copy (`useToolCopy()`, test/support/copy.ts).
 */
export default function setup(): () => void {
  const before = stamp()
  return () => {
    const after = stamp()
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k))
    if (changed.length > 0)
      throw new Error(`a test changed the shared tree in place (use a copy): ${changed.slice(0, 10).join(', ')}`)
  }
}
