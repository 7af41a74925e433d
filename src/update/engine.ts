import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import semver from 'semver'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import type { Progress, ProgressOptions } from '../output/progress.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { fetchBounded, fetchText } from './_fetch.js'
import { withInstallLock } from './_install-lock.js'
import { staged } from './_staged.js'
import { toolTrustedRoot } from './_tool-root.js'
import { extractRelease } from './archive.js'
import { checkUpdate } from './check.js'
import { expectedDigest, findChecksumAssets, findTarball } from './checksums.js'
import { integrityError, type UpdateStage } from './errors.js'
import { assertInstalled, cleanup, clearLeftovers, downloadTo, stagingDir, switchVersion } from './install.js'
import { updateLimits } from './limits.js'
import { clearUpdateNotice } from './notice-cache.js'
import { applyNpmUpdate } from './npm-update.js'
import type { UpdatePlanState, UpdateResult } from './plan-state.js'
import { releaseSource, updateSettings } from './settings.js'
import { releaseIdentity, verifyBundle } from './signature.js'
import { syncSkill } from './skills.js'
import { smokeTest } from './smoke.js'
import { updateTimeouts } from './timeouts.js'

export type { UpdatePlanState, UpdateResult } from './plan-state.js'

/**
 * Plan an update: the release, its checksums file and bundle (read into memory, nothing written), and the
 * tarball's expected digest. Integrity problems that can be seen here fail closed here.
 */
export async function planUpdate(
  config: ToolConfig,
  options: { to?: string | undefined; signal?: AbortSignal },
): Promise<UpdatePlanState> {
  const { result, release, install } = await checkUpdate(config, { ...options, writeCache: false })
  if (!release || !result.update_available) {
    throw new AgentError('E_CONFLICT', `already at ${config.version}; nothing newer on the ${result.channel} channel`, {
      details: { reason: 'up_to_date', current_version: config.version },
    })
  }
  if (!options.to && semver.lt(release.version, config.version))
    throw new AgentError('E_CONFLICT', 'a downgrade needs --to', { details: { reason: 'downgrade' } })
  const settings = updateSettings(config)
  if (install.method === 'unknown') {
    throw new AgentError(
      'E_CONFIG',
      `cannot tell how ${config.bin} was installed; update it the way you installed it`,
      {
        details: {
          stage: 'discover',
          install_method: 'unknown',
          fix: `npm install -g ${settings.package}@${release.version}`,
        },
      },
    )
  }
  const base: UpdatePlanState = {
    kind: 'update',
    install,
    from: config.version,
    to: release.version,
    tag: release.tag,
    tarball: null,
    checksums: null,
    bundle: null,
  }
  if (install.method === 'npm') return base
  await assertInstalled(install.root, install.version_dir, config.version, 'discover')
  const source = releaseSource(settings, options.signal)
  const assets = findChecksumAssets(release, config.bin)
  if (!assets)
    throw staged(
      integrityError('checksum_missing', `release ${release.tag} has no checksums.txt`),
      'discover',
      config.version,
      false,
      'not_started',
    )
  const tarball = findTarball(release, config.bin)
  if (!tarball)
    throw new AgentError(
      'E_NOT_FOUND',
      `release ${release.tag} has no tarball for ${process.platform}-${process.arch}`,
      { details: { stage: 'discover', assets: release.assets.map((a) => a.name) } },
    )
  const bounded = { timeoutMs: updateTimeouts(config).download_ms, signal: options.signal }
  const limits = updateLimits(config)
  const text = await fetchText(source, assets.checksums, bounded, {
    limit: 'checksums_bytes',
    maxBytes: limits.checksums_bytes,
  })
  const bundle = assets.bundle
    ? parseBundle(
        await fetchText(source, assets.bundle, bounded, { limit: 'bundle_bytes', maxBytes: limits.bundle_bytes }),
      )
    : null
  let sha256: string
  try {
    sha256 = expectedDigest(text, tarball.name)
  } catch (error) {
    throw staged(error, 'discover', config.version, false, 'not_started')
  }
  return {
    ...base,
    tarball: { ...tarball, sha256 },
    checksums: { text, sha256: createHash('sha256').update(text).digest('hex'), name: assets.checksums.name },
    bundle,
  }
}

/** A bundle that is not JSON is kept as text: verification then refuses it as `bundle_invalid`, fail closed. */
function parseBundle(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * Apply a planned update in stages with one commit point (the switch of `current`), as the only update of the
 * install (a lock; a second update waits, then finds the install changed and answers `E_CONFLICT`): clear what
 * a killed update left, download into a staging directory, verify the Sigstore bundle over checksums.txt and the
 * identity of the tag, verify the tarball's SHA-256, extract, smoke-run the new version, switch, sync the skill,
 * clear the notice, clean up. Before the switch nothing installed changes.
 */
export async function applyUpdate(
  config: ToolConfig,
  plan: UpdatePlanState,
  signal: AbortSignal,
  progress?: (options: ProgressOptions) => Progress,
): Promise<UpdateResult> {
  if (plan.install.method === 'npm') return applyNpmUpdate(config, plan, signal)
  if (plan.install.method !== 'standalone' || !plan.tarball || !plan.checksums)
    throw new AgentError('E_INTERNAL', 'incomplete update plan')
  const root = plan.install.root
  const timeouts = updateTimeouts(config)
  const versionDir = plan.install.version_dir
  try {
    return await withInstallLock(root, { waitMs: timeouts.lock_wait_ms, signal }, async () => {
      await assertInstalled(root, versionDir, plan.from)
      await clearLeftovers(root)
      return await stagedUpdate(config, plan, root, signal, progress)
    })
  } catch (error) {
    throw isAgentError(error) && 'binary_replaced' in error.details
      ? error
      : staged(error, 'lock', plan.from, false, 'not_started')
  }
}

async function stagedUpdate(
  config: ToolConfig,
  plan: UpdatePlanState,
  root: string,
  signal: AbortSignal,
  progress: ((options: ProgressOptions) => Progress) | undefined,
): Promise<UpdateResult> {
  const settings = updateSettings(config)
  const timeouts = updateTimeouts(config)
  const limits = updateLimits(config)
  const tarball = plan.tarball!
  const checksums = plan.checksums!
  const hint = `run "${config.bin} changelog --since ${plan.from}" to see what changed`
  let stage: UpdateStage = 'download'
  let extracted: string | undefined
  try {
    await mkdir(stagingDir(root), { recursive: true, mode: 0o700 })
    const temp = await mkdtemp(join(stagingDir(root), 'update-'))
    if (!plan.bundle)
      throw integrityError('signature_missing', `release ${plan.tag} has no ${checksums.name}.sigstore.json`)
    const source = releaseSource(settings, signal)
    const tarPath = join(temp, tarball.name)
    const digest = await fetchBounded(source, tarball, { timeoutMs: timeouts.download_ms, signal }, (response, s) => {
      const size = Number(response.headers.get('content-length')) || undefined
      const bar = progress?.({ label: `downloading ${tarball.name}`, total: size, unit: 'bytes' })
      return downloadTo(response, tarPath, s, (n) => bar?.tick(n), {
        maxBytes: limits.archive_bytes,
        name: tarball.name,
        url: tarball.url,
      }).finally(() => bar?.done())
    })
    stage = 'verify_signature'
    if (!settings.repository)
      throw integrityError(
        'identity_mismatch',
        'the tool declares no repository, so no signing identity can be expected',
      )
    await verifyBundle({
      bundle: plan.bundle,
      artifact: Buffer.from(checksums.text),
      // From the version being installed, never from the tag the release source labels it with.
      identity: releaseIdentity({ ...settings, repository: settings.repository }, plan.to),
      trustedRoot: await toolTrustedRoot(config, settings),
    })
    stage = 'verify_checksum'
    if (digest !== tarball.sha256)
      throw integrityError(
        'checksum_mismatch',
        `${tarball.name} has SHA-256 ${digest}, checksums.txt says ${tarball.sha256}`,
      )
    stage = 'extract'
    if (signal.aborted) throw signal.reason
    // Extracted from the verified bytes, every write checked, every file read back and compared with the
    // archive before anything points at it: a full disk can fail the update, never install a truncated release.
    extracted = await extractRelease(
      { path: tarPath, name: tarball.name, sha256: tarball.sha256, limits },
      root,
      plan.to,
    )
    stage = 'smoke_test'
    await smokeTest(extracted, plan.to, { timeoutMs: timeouts.smoke_ms, signal })
    if (signal.aborted) throw signal.reason
    stage = 'switch'
    await switchVersion(root, extracted)
  } catch (error) {
    if (extracted) await rm(extracted, { recursive: true, force: true })
    await rm(stagingDir(root), { recursive: true, force: true })
    throw staged(error, stage, plan.from, false, 'not_started')
  }
  // Past the commit point: the new version is live; what follows cannot undo it, only report.
  await rm(stagingDir(root), { recursive: true, force: true })
  let skill: UpdateResult['skill_sync_status'] = 'not_applicable'
  try {
    skill = (await syncSkill({ versionDir: extracted, name: config.bin, repository: settings.repository })).status
  } catch (error) {
    await cleanup(root).catch(() => [])
    const failure = staged(
      isAgentError(error)
        ? error
        : new AgentError('E_IO', `skill sync failed: ${(error as Error).message}`, { cause: error }),
      'skill_sync',
      plan.to,
      true,
      'failed',
    )
    failure.details.previous_version = plan.from
    failure.details.skill_sync_command = `npx --yes skills add ${settings.repository ?? '<repository>'} -y -g`
    throw failure
  }
  clearUpdateNotice(config.cacheDir)
  await cleanup(root).catch(() => [])
  return {
    previous_version: plan.from,
    current_version: plan.to,
    install_method: 'standalone',
    signature_status: 'verified',
    signature_verified: true,
    checksum_verified: true,
    skill_sync_status: skill,
    hint,
  }
}
