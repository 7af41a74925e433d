import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ToolConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'
import { runEnv } from '../settings/run-env.js'
import { toolEnv } from '../settings/tool-env.js'
import { integrityError } from './errors.js'
import { updateLimits } from './limits.js'
import {
  DEFAULT_NPM_REGISTRY,
  downloadVerifiedTarball,
  METADATA_TIMEOUT_MS,
  verifyNpmProvenance,
} from './provenance.js'
import type { UpdateSettings } from './settings.js'
import { releaseIdentity } from './signature.js'
import { updateTimeouts } from './timeouts.js'

/**
 * The registry the npm install method reads: `<BIN>_NPM_REGISTRY`, else `"agentcli": {"update": {"npm_registry"}}`,
 * else npm's own `npm_config_registry`, else the public registry. Choosing it weakens nothing: whatever it serves
 * must carry a provenance attestation that verifies against the pinned trusted root and the declared identity.
 */
export function npmRegistry(config: ToolConfig): string {
  const declared = (readToolSettings(config).update as { npm_registry?: string } | undefined)?.npm_registry
  return toolEnv(config.bin).raw('NPM_REGISTRY') || declared || runEnv().npm_config_registry || DEFAULT_NPM_REGISTRY
}

/**
 * Before `npm install -g`: verify `<package>@<version>`'s provenance (signed by the declared repository's
 * workflow at the tag of the version being installed, `<tag_prefix><version>`) and download exactly the attested
 * tarball into a temp dir, for npm to install from that file; every request within the declared `download_ms`.
 */
export async function verifiedNpmTarball(
  config: ToolConfig,
  settings: UpdateSettings,
  version: string,
  trustedRoot: unknown,
  signal: AbortSignal,
): Promise<{ path: string; signed_by: string; cleanup(): Promise<void> }> {
  const { repository } = settings
  if (!repository)
    throw integrityError(
      'identity_mismatch',
      'the tool declares no repository, so no provenance identity can be expected',
    )
  const downloadMs = updateTimeouts(config).download_ms
  const verified = await verifyNpmProvenance({
    registry: npmRegistry(config),
    name: settings.package,
    version,
    // The identity a standalone release of this version must carry: one rule for both install methods.
    identity: releaseIdentity({ ...settings, repository }, version),
    trustedRoot,
    signal,
    // The author's download deadline bounds the registry as it bounds a standalone release's assets.
    timeoutMs: Math.min(METADATA_TIMEOUT_MS, downloadMs),
    maxBytes: updateLimits(config).registry_bytes,
  })
  // The run's TMPDIR (an in-process run's own), as os.tmpdir() reads it for a process of its own.
  const dir = await mkdtemp(join(runEnv().TMPDIR || tmpdir(), `${config.bin}-npm-update-`))
  const cleanup = () => rm(dir, { recursive: true, force: true })
  try {
    const path = await downloadVerifiedTarball(verified, dir, signal, downloadMs)
    return { path, signed_by: verified.signed_by, cleanup }
  } catch (error) {
    await cleanup()
    throw error
  }
}
