import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BAKED_COMPACT_FILE, BAKED_COMPACT_MARK } from '../describe/baked-compact.js'
import { descriptionLines } from '../describe/command-memo.js'
import { COMMAND_REFERENCE_FILE, encodeCommandReferences } from '../describe/command-reference-memo.js'
import { compactReference } from '../describe/compact.js'
import { DESCRIPTIONS_FILE } from '../describe/descriptions.js'
import type { Reference } from '../describe/reference.js'
import { probeEnv } from './probe-env.js'

/**
 * Compute once what `reference --compact` prints most of its time computing: ask the freshly bundled tool for its
 * full reference (in a throw-away home, so nothing of the builder's is read or written), compact it here with the
 * framework the bundle was built from, and store both beside the bundle, naming the bundle by its id. A run of that
 * bundle whose reference is the same prints the stored form (`bakedCompact`); any other run compacts. When a probe
 * run shows the bundle answering with the stored form, the texts it answered from are stored too, and a run on the
 * same texts prints the form without building the reference (`storedCompact`), and `reference <path>` of one command
 * prints that command's part (`storedCommandReference`). Nothing is written when the tool cannot answer (the file of an earlier build is removed either way).
 */
export function writeCompactMemo(root: string, bin: string, bundleId: string): boolean {
  const path = join(root, BAKED_COMPACT_FILE)
  rmSync(path, { force: true })
  rmSync(join(root, COMMAND_REFERENCE_FILE), { force: true })
  const home = mkdtempSync(join(tmpdir(), 'agentcli-build-'))
  try {
    const full = referenceOf(bin, home, ['reference', '--format', 'json'])
    if (full === undefined) return false
    const text = JSON.stringify(full)
    const compact = JSON.stringify(compactReference(JSON.parse(text) as Reference))
    const header = JSON.stringify({ [BAKED_COMPACT_MARK]: 1, bundle_id: bundleId })
    // Asked once more with a stand-in for the compact form: answered with it, the run's own reference passed
    // bakedCompact's check, so any run of this bundle on these inputs would too (storedCompact skips building it).
    writeFileSync(path, `${header}\n${text}\n${JSON.stringify(PROBE)}\n`)
    const probed = referenceOf(bin, home, ['reference', '--compact', '--format', 'json'])
    const inputs = JSON.stringify(probed) === JSON.stringify(PROBE) ? inputsOf(root) : undefined
    writeFileSync(path, `${header}\n${text}\n${compact}\n${inputs ? `${inputs}\n` : ''}`)
    // The same proof covers each command's part of it: `reference <path>` of one command without building it.
    if (inputs) {
      const [pjson, manifest, descriptions] = JSON.parse(inputs) as [string, string, string]
      const memo = { pjson, manifest, descriptionsHeader: descriptionLines(descriptions, '').header }
      writeFileSync(
        join(root, COMMAND_REFERENCE_FILE),
        encodeCommandReferences(bundleId, memo, JSON.parse(text) as Reference, descriptions),
      )
    }
    return true
  } catch {
    rmSync(path, { force: true })
    rmSync(join(root, COMMAND_REFERENCE_FILE), { force: true })
    return false
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

/** What the probe run answers with when it prints the stored form. */
const PROBE = { agentcli_build_probe: 'the stored compact form' }

/** The data of the bundled tool's answer to `args`, in the throw-away `home`; undefined when it failed. */
function referenceOf(bin: string, home: string, args: string[]): unknown {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...probeEnv(home), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A tool of 1000 commands answers with 1.4 MB: past spawnSync's default of 1 MB the answer was cut and lost.
    maxBuffer: 1 << 30,
  })
  const envelope = JSON.parse(result.stdout) as { ok?: boolean; data?: unknown }
  return result.status === 0 && envelope.ok === true ? envelope.data : undefined
}

/**
 * The exact texts `reference` is computed from besides the bundle, as `storedCompact` compares them; none for a tool
 * with plugins or hooks (what those add to the reference is not in these files).
 */
function inputsOf(root: string): string | undefined {
  const pjson = readFileSync(join(root, 'package.json'), 'utf8')
  const oclif = (JSON.parse(pjson) as { oclif?: Record<string, unknown> }).oclif ?? {}
  for (const key of ['plugins', 'devPlugins', 'jitPlugins', 'hooks'])
    if (oclif[key] !== undefined && Object.keys(oclif[key] as object).length > 0) return undefined
  try {
    const manifest = readFileSync(join(root, 'oclif.manifest.json'), 'utf8')
    const descriptions = readFileSync(join(root, DESCRIPTIONS_FILE), 'utf8')
    return JSON.stringify([pjson, manifest, descriptions])
  } catch {
    return undefined
  }
}
