import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BAKED_COMPACT_FILE, BAKED_COMPACT_MARK, COMPACT_INPUTS } from '../describe/baked-compact.js'
import { COMMAND_REFERENCE_FILE, encodeCommandReferences } from '../describe/command-reference-memo.js'
import { compactReference } from '../describe/compact.js'
import { descriptionLine } from '../describe/descriptions.js'
import type { Reference } from '../describe/reference.js'
import { redactedJson } from '../output/redact.js'
import { sensitiveKeysSignature } from '../output/redact-keys.js'
import { probeEnv } from './probe-env.js'
import { underToolKeys } from './tool-keys.js'

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
    const header = JSON.stringify({
      [BAKED_COMPACT_MARK]: 1,
      bundle_id: bundleId,
      ...redactionProof(root, compact),
    })
    // Asked once more with a stand-in for the compact form: answered with it, the run's own reference passed
    // bakedCompact's check, so any run of this bundle on these inputs would too (storedCompact skips building it).
    writeFileSync(path, `${header}\n${text}\n${JSON.stringify(PROBE)}\n`)
    const probed = referenceOf(bin, home, ['reference', '--compact', '--format', 'json'])
    const inputs = JSON.stringify(probed) === JSON.stringify(PROBE) ? inputsOf(root) : undefined
    // With its inputs recorded, a run needs the full reference's text no more: while they are the same it prints
    // the stored form, and once one changed the reference is built anew (the command memo below holds its parts).
    const stored = `${header}\n${inputs ? '' : text}\n${compact}\n`
    // The inputs' lengths, then their bytes as they are: a run compares bytes, decoding and escaping none of them.
    const lengths = inputs ? `${JSON.stringify(inputs.map((b) => b.length))}\n` : ''
    writeFileSync(path, Buffer.concat([Buffer.from(stored + lengths), ...(inputs ?? [])]))
    // The same proof covers each command's part of it: `reference <path>` of one command without building it.
    if (inputs) {
      const [pjson, manifest, descriptions] = inputs as [Buffer, Buffer, Buffer]
      const memo = {
        pjson: pjson.toString('utf8'),
        manifest: manifest.toString('utf8'),
        descriptionsHeader: descriptionLine(descriptions, '').header.toString('utf8'),
      }
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

/**
 * The redactor's verdict on the compact form, as a run prints it: walked as an envelope's `data`, with no secret
 * registered and the tool's declared keys (package.json's `agentcli.redact_keys`, declared as a run's session
 * declares them), does it change nothing? Then `{ redaction_clean: { keys, bytes } }` for the header, and a run
 * under the same rules skips the walk of that form (src/output/redact-proof.ts); else nothing.
 */
function redactionProof(root: string, compact: string): { redaction_clean?: { keys: string; bytes: number } } {
  return underToolKeys(root, () => {
    const envelope = { data: JSON.parse(compact) as unknown }
    if (redactedJson(envelope) !== JSON.stringify(envelope)) return {}
    return { redaction_clean: { keys: sensitiveKeysSignature(), bytes: Buffer.byteLength(compact) } }
  })
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
 * The exact bytes of the files `reference` is computed from besides the bundle, as `storedCompact` compares them;
 * none for a tool with plugins or hooks (what those add to the reference is not in these files).
 */
function inputsOf(root: string): Buffer[] | undefined {
  const pjson = readFileSync(join(root, 'package.json'), 'utf8')
  const oclif = (JSON.parse(pjson) as { oclif?: Record<string, unknown> }).oclif ?? {}
  for (const key of ['plugins', 'devPlugins', 'jitPlugins', 'hooks'])
    if (oclif[key] !== undefined && Object.keys(oclif[key] as object).length > 0) return undefined
  try {
    return COMPACT_INPUTS.map((file) => readFileSync(join(root, file)))
  } catch {
    return undefined
  }
}
