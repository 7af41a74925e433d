// semver's functions, not its index: the index evaluates every module of the package, ranges included (≈ 1 ms).
import semverGt from 'semver/functions/gt.js'
import semverMajor from 'semver/functions/major.js'
import { AgentError } from '../errors/agent-error.js'
import { invocation } from '../runtime/invocation.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { findChecksumAssets } from './checksums.js'
import { detectInstall, type InstallMethod } from './install.js'
import { clearUpdateNotice, writeUpdateNotice } from './notice-cache.js'
import { checkedSource } from './recent-check.js'
import { releaseSource, type UpdateSettings, updateSettings } from './settings.js'
import { pickRelease, type Release } from './source.js'
import { updateTimeouts } from './timeouts.js'

/** What `update --check` reports (read-only). */
export type CheckResult = {
  current_version: string
  target_version: string | null
  update_available: boolean
  install_method: InstallMethod['method']
  channel: string
  source: string
  release_url: string | null
  changes: { package: boolean; skills: boolean }
  checksums_available: boolean
  signature_available: boolean
  recommended_command: string | null
}

function recommended(config: ToolConfig, install: InstallMethod, settings: UpdateSettings, version: string): string {
  if (install.method === 'unknown') return `npm install -g ${settings.package}@${version}`
  return `${invocation(config.bin)} update --dry-run`
}

/** Discover the target release and what an update would change; refresh the notice cache. */
export async function checkUpdate(
  config: ToolConfig,
  options: { to?: string | undefined; signal?: AbortSignal; timeoutMs?: number; writeCache?: boolean },
): Promise<{ result: CheckResult; release: Release | undefined; install: InstallMethod }> {
  const settings = updateSettings(config)
  const install = await detectInstall(config.root, settings.package, {
    npmPrefixTimeoutMs: updateTimeouts(config).npm_prefix_ms,
  })
  const releases = await releaseSource(settings, options.signal, options.timeoutMs).list()
  const release = pickRelease(releases, { channel: settings.channel, to: options.to })
  if (options.to && !release) {
    throw new AgentError('E_NOT_FOUND', `no release ${options.to} in ${releaseSource(settings).describe}`, {
      details: { stage: 'discover', got: options.to, allowed: releases.map((r) => r.version) },
    })
  }
  const available = Boolean(
    release && (options.to ? release.version !== config.version : semverGt(release.version, config.version)),
  )
  const assets = release ? findChecksumAssets(release, config.bin) : undefined
  const result: CheckResult = {
    current_version: config.version,
    target_version: release?.version ?? null,
    update_available: available,
    install_method: install.method,
    channel: settings.channel,
    source: releaseSource(settings).describe,
    release_url: release?.url ?? null,
    changes: { package: available, skills: available },
    checksums_available: Boolean(assets),
    signature_available: Boolean(assets?.bundle),
    recommended_command: available && release ? recommended(config, install, settings, release.version) : null,
  }
  if (options.writeCache !== false && !options.to) {
    if (release) {
      const major = semverMajor(release.version) > semverMajor(config.version)
      const security = /^#+\s*security/im.test(release.notes)
      // Also when nothing is newer: what was last known (and when) is what an offline check reports.
      await writeUpdateNotice(config.cacheDir, {
        latest_version: release.version,
        checked_at: new Date().toISOString(),
        install_method: install.method,
        recommended_command: available ? result.recommended_command : null,
        release_url: release.url,
        severity: available && (major || security) ? 'warning' : 'info',
        source: checkedSource(settings),
        channel: settings.channel,
      })
    } else clearUpdateNotice(config.cacheDir)
  }
  return { result, release, install }
}
