import { resolve } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'
import { toolEnv } from '../settings/tool-env.js'
import { directorySource, githubSource, mirrorSource, type ReleaseSource } from './source.js'

/** A tool's update settings: `"agentcli": {"update": {…}}` in package.json, overridable by environment. */
export type UpdateSettings = {
  repository: string | null
  workflow: string
  issuer: string
  source: string
  channel: string
  /** A trusted_root.json the tool pins (a private Sigstore instance), resolved against the tool's root. */
  trusted_root: string | null
  /** The TUF repository that distributes the Sigstore trusted root (default: Sigstore's public-good CDN). */
  tuf_mirror: string
  /** The initial, trusted `root.json` of a `tuf_mirror` other than the public-good one, from the tool's package. */
  tuf_root: string | null
  /** What precedes the version in a release tag: `v` for `v1.2.3` (the identity is built from it). */
  tag_prefix: string
  package: string
  github_api: string
}

/** The TUF repository of Sigstore's public-good instance. */
export const PUBLIC_GOOD_TUF_MIRROR = 'https://tuf-repo-cdn.sigstore.dev'

/**
 * Resolve the settings; `<BIN>_UPDATE_SOURCE` (github, a mirror URL, or a directory) and friends override where
 * to look. What decides trust (the identity, the trusted root, the TUF root) comes from the tool's own
 * package.json only: no environment variable can change what a release must prove.
 */
export function updateSettings(config: ToolConfig): UpdateSettings {
  const declared = (readToolSettings(config).update ?? {}) as Partial<UpdateSettings>
  const env = (name: 'UPDATE_SOURCE' | 'UPDATE_CHANNEL' | 'UPDATE_API_URL') => toolEnv(config.bin).get(name)
  return {
    repository: declared.repository ?? null,
    workflow: declared.workflow ?? '.github/workflows/release.yml',
    issuer: declared.issuer ?? 'https://token.actions.githubusercontent.com',
    source: env('UPDATE_SOURCE') ?? declared.source ?? 'github',
    channel: env('UPDATE_CHANNEL') ?? declared.channel ?? 'stable',
    trusted_root: declared.trusted_root ? resolve(config.root, declared.trusted_root) : null,
    tuf_mirror: declared.tuf_mirror ?? PUBLIC_GOOD_TUF_MIRROR,
    tuf_root: declared.tuf_root ? resolve(config.root, declared.tuf_root) : null,
    tag_prefix: typeof declared.tag_prefix === 'string' ? declared.tag_prefix : 'v',
    package: declared.package ?? config.name,
    github_api: env('UPDATE_API_URL') ?? declared.github_api ?? 'https://api.github.com/',
  }
}

/** The release source the settings name. */
export function releaseSource(settings: UpdateSettings, signal?: AbortSignal, timeoutMs?: number): ReleaseSource {
  if (/^https?:\/\//.test(settings.source)) return mirrorSource(settings.source, signal, timeoutMs)
  if (settings.source !== 'github') return directorySource(settings.source)
  if (!settings.repository) {
    throw new AgentError('E_CONFIG', 'this tool declares no repository to update from', {
      details: { stage: 'discover', fix: 'set "agentcli": {"update": {"repository": "owner/repo"}} in package.json' },
    })
  }
  return githubSource(settings.repository, settings.github_api, signal, timeoutMs)
}
