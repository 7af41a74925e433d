import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '@oclif/core'
import semver from 'semver'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import { clearUpdateNotice } from '../notices.js'
import { runBounded } from './_child.js'
import { withInstallLock } from './_install-lock.js'
import { checkUpdate } from './check.js'
import { expectedDigest, findChecksumAssets, findTarball } from './checksums.js'
import { integrityError, type UpdateStage } from './errors.js'
import {
  cleanup,
  clearLeftovers,
  downloadTo,
  extractRelease,
  type InstallMethod,
  stagingDir,
  switchVersion,
} from './install.js'
import { releaseSource, type UpdateSettings, updateSettings } from './settings.js'
import { expectedIdentity, publicGoodTrustedRoot, verifyBundle } from './signature.js'
import { syncSkill } from './skills.js'
import { smokeTest } from './smoke.js'
import type { Asset, ReleaseSource } from './source.js'
import { updateTimeouts } from './timeouts.js'

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

/**
 * Fetch one asset within `timeoutMs` (body included: the caller reads it under the same signal). A deadline
 * is `E_TIMEOUT` naming the asset; the command's own cancellation stays `E_INTERRUPTED`.
 */
async function fetchBounded<T>(
  source: ReleaseSource,
  asset: Asset,
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
  read: (response: Response, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline
  try {
    return await read(await source.fetch(asset, signal), signal)
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason
    if (deadline.aborted)
      throw new AgentError('E_TIMEOUT', `downloading ${asset.name} took longer than ${options.timeoutMs} ms`, {
        details: { stage: 'download', asset: asset.name, timeout_ms: options.timeoutMs },
        cause: error,
      })
    if (isAgentError(error)) throw error
    throw new AgentError('E_NETWORK', `cannot download ${asset.name}`, { details: { stage: 'download' }, cause: error })
  }
}

async function fetchText(
  source: ReleaseSource,
  asset: Asset,
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<string> {
  return fetchBounded(source, asset, options, async (response) => {
    if (!response.ok)
      throw new AgentError(
        response.status === 404 ? 'E_NOT_FOUND' : 'E_SERVER',
        `cannot download ${asset.name}: HTTP ${response.status}`,
        { details: { stage: 'download', asset: asset.name } },
      )
    return response.text()
  })
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
  const text = await fetchText(source, assets.checksums, bounded)
  const bundle = assets.bundle ? parseBundle(await fetchText(source, assets.bundle, bounded)) : null
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

function trustedRoot(settings: UpdateSettings): Promise<unknown> {
  return settings.trusted_root
    ? readFile(settings.trusted_root, 'utf8').then((t) => JSON.parse(t))
    : Promise.resolve(publicGoodTrustedRoot())
}

/** Under the lock: the install must still be the one the plan (and its confirm token) was made for. */
export async function assertInstalled(
  root: string,
  versionDir: string,
  from: string,
  stage: UpdateStage = 'lock',
): Promise<void> {
  const current = await realpath(join(root, 'current')).catch(() => undefined)
  if (current === versionDir) return
  let now: string | null = null
  try {
    now = (JSON.parse(await readFile(join(current ?? '', 'package.json'), 'utf8')) as { version: string }).version
  } catch {}
  throw new AgentError('E_CONFLICT', `the install changed since this update was planned (now ${now ?? 'unknown'})`, {
    details: {
      reason: 'install_changed',
      stage,
      planned_from: from,
      installed_version: now,
      fix: 'run the dry-run again for a new plan and token',
    },
  })
}

async function npmInstall(config: Config, plan: UpdatePlanState, signal: AbortSignal): Promise<UpdateResult> {
  const settings = updateSettings(config)
  const timeoutMs = updateTimeouts(config).npm_install_ms
  const spec = `${settings.package}@${plan.to}`
  const npm = await runBounded('npm', ['install', '-g', spec], { timeoutMs, signal }).catch((error: unknown) => {
    throw staged(
      isAgentError(error) ? error : new AgentError('E_IO', `cannot run npm: ${(error as Error).message}`),
      'switch',
      plan.from,
      false,
      'not_started',
    )
  })
  if (npm.timed_out)
    throw staged(
      new AgentError('E_TIMEOUT', `npm install -g ${spec} did not finish within ${timeoutMs} ms; it was stopped`, {
        details: { timeout_ms: timeoutMs, fix: `npm install -g ${spec}` },
      }),
      'switch',
      plan.from,
      false,
      'not_started',
    )
  if (npm.code !== 0)
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
    hint: `run "${config.bin} changelog --since ${plan.from}" to see what changed`,
  }
}

/**
 * Apply a planned update in stages with one commit point (the switch of `current`), as the only update of the
 * install (a lock; a second update waits, then finds the install changed and answers `E_CONFLICT`): clear what
 * a killed update left, download into a staging directory, verify the Sigstore bundle over checksums.txt and the
 * identity of the tag, verify the tarball's SHA-256, extract, smoke-run the new version, switch, sync the skill,
 * clear the notice, clean up. Before the switch nothing installed changes.
 */
export async function applyUpdate(config: Config, plan: UpdatePlanState, signal: AbortSignal): Promise<UpdateResult> {
  if (plan.install.method === 'npm') {
    // npm replaces the package in place: serialise per user, and refuse if another update already moved it on.
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 })
    const wait = { waitMs: updateTimeouts(config).lock_wait_ms, signal }
    return withInstallLock(config.dataDir, wait, async () => {
      const now = await readFile(join(config.root, 'package.json'), 'utf8')
        .then((t) => (JSON.parse(t) as { version?: string }).version)
        .catch(() => undefined)
      if (now !== plan.from)
        throw staged(
          new AgentError('E_CONFLICT', `the install changed since this update was planned (now ${now ?? 'unknown'})`, {
            details: { reason: 'install_changed', planned_from: plan.from, installed_version: now ?? null },
          }),
          'lock',
          plan.from,
          false,
          'not_started',
        )
      return npmInstall(config, plan, signal)
    }).catch((error: unknown) => {
      throw isAgentError(error) && 'binary_replaced' in error.details
        ? error
        : staged(error, 'lock', plan.from, false, 'not_started')
    })
  }
  if (plan.install.method !== 'standalone' || !plan.tarball || !plan.checksums)
    throw new AgentError('E_INTERNAL', 'incomplete update plan')
  const root = plan.install.root
  const timeouts = updateTimeouts(config)
  const versionDir = plan.install.version_dir
  try {
    return await withInstallLock(root, { waitMs: timeouts.lock_wait_ms, signal }, async () => {
      await assertInstalled(root, versionDir, plan.from)
      await clearLeftovers(root)
      return await stagedUpdate(config, plan, root, signal)
    })
  } catch (error) {
    throw isAgentError(error) && 'binary_replaced' in error.details
      ? error
      : staged(error, 'lock', plan.from, false, 'not_started')
  }
}

async function stagedUpdate(
  config: Config,
  plan: UpdatePlanState,
  root: string,
  signal: AbortSignal,
): Promise<UpdateResult> {
  const settings = updateSettings(config)
  const timeouts = updateTimeouts(config)
  const tarball = plan.tarball!
  const checksums = plan.checksums!
  const hint = `run "${config.bin} changelog --since ${plan.from}" to see what changed`
  await mkdir(stagingDir(root), { recursive: true, mode: 0o700 })
  const temp = await mkdtemp(join(stagingDir(root), 'update-'))
  let stage: UpdateStage = 'download'
  let extracted: string | undefined
  try {
    if (!plan.bundle)
      throw integrityError('signature_missing', `release ${plan.tag} has no ${checksums.name}.sigstore.json`)
    const source = releaseSource(settings, signal)
    const tarPath = join(temp, tarball.name)
    const digest = await fetchBounded(source, tarball, { timeoutMs: timeouts.download_ms, signal }, (response, s) =>
      downloadTo(response, tarPath, s),
    )
    stage = 'verify_signature'
    if (!settings.repository)
      throw integrityError(
        'identity_mismatch',
        'the tool declares no repository, so no signing identity can be expected',
      )
    await verifyBundle({
      bundle: plan.bundle,
      artifact: Buffer.from(checksums.text),
      identity: {
        subject: expectedIdentity(settings.repository, settings.workflow, plan.tag),
        issuer: settings.issuer,
      },
      trustedRoot: await trustedRoot(settings),
    })
    stage = 'verify_checksum'
    if (digest !== tarball.sha256)
      throw integrityError(
        'checksum_mismatch',
        `${tarball.name} has SHA-256 ${digest}, checksums.txt says ${tarball.sha256}`,
      )
    stage = 'extract'
    if (signal.aborted) throw signal.reason
    extracted = await extractRelease(tarPath, root, plan.to)
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
