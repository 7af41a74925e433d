import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BAKED_COMPACT_FILE, BAKED_COMPACT_MARK } from '../describe/baked-compact.js'
import { compactReference } from '../describe/compact.js'
import type { Reference } from '../describe/reference.js'

/**
 * Compute once what `reference --compact` prints most of its time computing: ask the freshly bundled tool for its
 * full reference (in a throw-away home, so nothing of the builder's is read or written), compact it here with the
 * framework the bundle was built from, and store both beside the bundle, naming the bundle by its id. A run of that
 * bundle whose reference is the same prints the stored form (`bakedCompact`); any other run compacts.
 * Nothing is written when the tool cannot answer (the file of an earlier build is removed either way).
 */
export function writeCompactMemo(root: string, bin: string, bundleId: string): boolean {
  const path = join(root, BAKED_COMPACT_FILE)
  rmSync(path, { force: true })
  const home = mkdtempSync(join(tmpdir(), 'agentcli-build-'))
  try {
    const result = spawnSync(process.execPath, [bin, 'reference', '--format', 'json'], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_DATA_HOME: join(home, 'data'),
        XDG_CACHE_HOME: join(home, 'cache'),
        NO_COLOR: '1',
        // One run in a home thrown away after it: a code cache written at its exit would never be read.
        AGENTCLI_CODE_CACHE: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const envelope = JSON.parse(result.stdout) as { ok?: boolean; data?: Reference }
    if (result.status !== 0 || envelope.ok !== true || !envelope.data) return false
    const full = JSON.stringify(envelope.data)
    const compact = JSON.stringify(compactReference(JSON.parse(full) as Reference))
    const header = JSON.stringify({ [BAKED_COMPACT_MARK]: 1, bundle_id: bundleId })
    writeFileSync(path, `${header}\n${full}\n${compact}\n`)
    return true
  } catch {
    return false
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}
