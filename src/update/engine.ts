import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '@oclif/core'
import semver from 'semver'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import { clearUpdateNotice } from '../notices.js'
import { checkUpdate } from './check.js'
import { expectedDigest, findChecksumAssets, findTarball } from './checksums.js'
import { integrityError, type UpdateStage } from './errors.js'
import { cleanup, downloadTo, extractRelease, type InstallMethod, switchVersion } from './install.js'
import { releaseSource, type UpdateSettings, updateSettings } from './settings.js'
import { releaseIdentity, verifyBundle } from './signature.js'
import { syncSkill } from './skills.js'
import type { ReleaseSource } from './source.js'
import { loadTrustedRoot } from './trust-root.js'

/** What the confirm step needs, fixed at dry-run time and bound into the token. */
export type UpdatePlanState = {
  kind: 'update'
  install: InstallMethod
  from: string
  to: string
  tag: string
  tarball: { name: string; url: string; sha256: string } | null
  checksums: { text: string; sha256: string; name: string } | null
  bundle: unknown
}

async function fetchText(
  source: ReleaseSource,
  asset: { name: string; url: string },
  signal?: AbortSignal,
): Promise<string> {
  let response: Response
  try {
    response = await source.fetch(asset, signal)
  } catch (error) {
    throw new AgentError('E_NETWORK', `cannot download ${asset.name}`, { details: { stage: 'download' }, cause: error })
  }
  if (!response.ok)
    throw new AgentError(
      response.status === 404 ? 'E_NOT_FOUND' : 'E_SERVER',
      `cannot download ${asset.name}: HTTP ${response.status}`,
      { details: { stage: 'download', asset: asset.name } },
    )
  return response.text()
}

/**
 * Plan an update: the release, its checksums file and bundle (read into memory, nothing written), and the
 * tarball's expected digest. Integrity problems that can be seen here fail closed here.
 */
export async function planUpdate(
  config: Config,
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
  const text = await fetchText(source, assets.checksums, options.signal)
  const bundle = assets.bundle ? parseBundle(await fetchText(source, assets.bundle, options.signal)) : null
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

/** The result of an update or a rollback. */
export type UpdateResult = {
  previous_version: string
  current_version: string
  install_method: InstallMethod['method']
  signature_status: 'verified' | 'handled_by_npm_installer' | 'not_checked'
  signature_verified: boolean
  checksum_verified: boolean
  skill_sync_status: 'synced' | 'not_applicable' | 'failed'
  hint: string
}

/** Decorate a failure with where it happened and what state the install is in (spec 002 §14). */
function staged(error: unknown, stage: UpdateStage, from: string, replaced: boolean, skill: string): AgentError {
  const agent = toAgentError(error)
  agent.details.stage ??= stage
  agent.details.current_version = from
  agent.details.binary_replaced = replaced
  agent.details.skill_sync_status = skill
  return agent
}

/** The Sigstore trusted root: the tool's pinned one, else refreshed through TUF (see `./trust-root.ts`). */
async function trustedRoot(config: Config, settings: UpdateSettings): Promise<unknown> {
  const { root } = await loadTrustedRoot({
    pinned: settings.trusted_root,
    mirror: settings.tuf_mirror,
    tufRoot: settings.tuf_root,
    cacheDir: config.cacheDir,
    timeoutMs: 10_000,
  })
  return root
}

/**
 * Apply a planned update in stages with one commit point (the switch of `current`): download into a temp dir,
 * verify the Sigstore bundle over checksums.txt and the identity of the tag, verify the tarball's SHA-256,
 * extract, switch, sync the skill, clear the notice, clean up. Before the switch nothing installed changes.
 */
export async function applyUpdate(config: Config, plan: UpdatePlanState, signal: AbortSignal): Promise<UpdateResult> {
  const settings = updateSettings(config)
  const hint = `run "${config.bin} changelog --since ${plan.from}" to see what changed`
  if (plan.install.method === 'npm') {
    const npm = spawnSync('npm', ['install', '-g', `${settings.package}@${plan.to}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    if (npm.status !== 0)
      throw staged(
        new AgentError('E_IO', `npm install failed: ${npm.stderr.slice(-500)}`),
        'switch',
        plan.from,
        false,
        'not_started',
      )
    clearUpdateNotice(config.cacheDir)
    return {
      previous_version: plan.from,
      current_version: plan.to,
      install_method: 'npm',
      signature_status: 'handled_by_npm_installer',
      signature_verified: false,
      checksum_verified: false,
      skill_sync_status: 'not_applicable',
      hint,
    }
  }
  if (plan.install.method !== 'standalone' || !plan.tarball || !plan.checksums)
    throw new AgentError('E_INTERNAL', 'incomplete update plan')
  const root = plan.install.root
  const temp = await mkdtemp(join(tmpdir(), `${config.bin}-update-`))
  let stage: UpdateStage = 'download'
  let extracted: string | undefined
  try {
    if (!plan.bundle)
      throw integrityError('signature_missing', `release ${plan.tag} has no ${plan.checksums.name}.sigstore.json`)
    const source = releaseSource(settings, signal)
    const tarPath = join(temp, plan.tarball.name)
    const digest = await downloadTo(await source.fetch(plan.tarball, signal), tarPath, signal)
    stage = 'verify_signature'
    if (!settings.repository)
      throw integrityError(
        'identity_mismatch',
        'the tool declares no repository, so no signing identity can be expected',
      )
    await verifyBundle({
      bundle: plan.bundle,
      artifact: Buffer.from(plan.checksums.text),
      // From the version being installed, never from the tag the release source labels it with.
      identity: releaseIdentity({ ...settings, repository: settings.repository }, plan.to),
      trustedRoot: await trustedRoot(config, settings),
    })
    stage = 'verify_checksum'
    if (digest !== plan.tarball.sha256)
      throw integrityError(
        'checksum_mismatch',
        `${plan.tarball.name} has SHA-256 ${digest}, checksums.txt says ${plan.tarball.sha256}`,
      )
    stage = 'extract'
    if (signal.aborted) throw signal.reason
    extracted = await extractRelease(tarPath, root, plan.to)
    if (signal.aborted) throw signal.reason
    stage = 'switch'
    await switchVersion(root, extracted)
  } catch (error) {
    if (extracted) await rm(extracted, { recursive: true, force: true })
    await rm(temp, { recursive: true, force: true })
    throw staged(error, stage, plan.from, false, 'not_started')
  }
  // Past the commit point: the new version is live; what follows cannot undo it, only report.
  let skill: UpdateResult['skill_sync_status'] = 'not_applicable'
  try {
    skill = (await syncSkill({ versionDir: extracted, name: config.bin, repository: settings.repository })).status
  } catch (error) {
    await rm(temp, { recursive: true, force: true })
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
  await rm(temp, { recursive: true, force: true })
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
