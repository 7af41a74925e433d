import type { Config } from '@oclif/core'
import { AgentError } from '../errors/agent-error.js'
import { toolEnv } from '../settings.js'
import { readToolSettings } from '../tool-settings.js'
import { directorySource, githubSource, mirrorSource, type ReleaseSource } from './source.js'

/** A tool's update settings: `"agentcli": {"update": {…}}` in package.json, overridable by environment. */
export type UpdateSettings = {
  repository: string | null
  workflow: string
  issuer: string
  source: string
  channel: string
  trusted_root: string | null
  package: string
  github_api: string
}

/** Resolve the settings; `<BIN>_UPDATE_SOURCE` (github, a mirror URL, or a directory) and friends override. */
export function updateSettings(config: Config): UpdateSettings {
  const declared = (readToolSettings(config).update ?? {}) as Partial<UpdateSettings>
  const env = (name: 'UPDATE_SOURCE' | 'UPDATE_CHANNEL' | 'SIGSTORE_TRUSTED_ROOT' | 'UPDATE_API_URL') =>
    toolEnv(config.bin).get(name)
  return {
    repository: declared.repository ?? null,
    workflow: declared.workflow ?? '.github/workflows/release.yml',
    issuer: declared.issuer ?? 'https://token.actions.githubusercontent.com',
    source: env('UPDATE_SOURCE') ?? declared.source ?? 'github',
    channel: env('UPDATE_CHANNEL') ?? declared.channel ?? 'stable',
    trusted_root: env('SIGSTORE_TRUSTED_ROOT') ?? declared.trusted_root ?? null,
    package: declared.package ?? config.name,
    github_api: env('UPDATE_API_URL') ?? declared.github_api ?? 'https://api.github.com/',
  }
}

/** The release source the settings name. */
export function releaseSource(settings: UpdateSettings, signal?: AbortSignal, timeoutMs?: number): ReleaseSource {
  if (/^https?:\/\//.test(settings.source)) return mirrorSource(settings.source, signal)
  if (settings.source !== 'github') return directorySource(settings.source)
  if (!settings.repository) {
    throw new AgentError('E_CONFIG', 'this tool declares no repository to update from', {
      details: { stage: 'discover', fix: 'set "agentcli": {"update": {"repository": "owner/repo"}} in package.json' },
    })
  }
  return githubSource(settings.repository, settings.github_api, signal, timeoutMs)
}
