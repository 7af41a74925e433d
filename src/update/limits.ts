import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'
import { integrityError, type UpdateStage } from './errors.js'

/**
 * The most an update accepts from a release, declared by the tool. Every byte a release source sends is counted
 * against one of these before it is trusted, kept or written: a hostile or broken source cannot fill the disk
 * or the memory of the machine that updates.
 */
export type UpdateLimits = {
  /** The release tarball as downloaded (refused from its Content-Length, else as its bytes arrive). */
  archive_bytes: number
  /** `checksums.txt`, read into memory (it is what the signature covers). */
  checksums_bytes: number
  /** The Sigstore bundle over `checksums.txt`, read into memory. */
  bundle_bytes: number
  /** One npm registry answer (the packument, the provenance attestations), read into memory. */
  registry_bytes: number
  /** One file of the tarball, from its header (before any of it is written). */
  entry_bytes: number
  /** Every file of the tarball together, from their headers. */
  unpacked_bytes: number
  /** The entries (files, directories, links) of the tarball. */
  entries: number
  /** How many times larger than the tarball its files may be together (a compression bomb is far above it). */
  ratio: number
}

const MiB = 1024 * 1024

/**
 * The defaults: a release of a Node CLI (a tarball of tens of MiB that unpacks to a few times that, compressed
 * JavaScript rarely beyond 10:1) passes with room; a hostile one is refused long before it matters.
 */
export const DEFAULT_UPDATE_LIMITS: UpdateLimits = {
  archive_bytes: 512 * MiB,
  checksums_bytes: MiB,
  bundle_bytes: MiB,
  // The abbreviated packument of a package with thousands of versions is a few MiB; the attestations far less.
  registry_bytes: 32 * MiB,
  entry_bytes: 512 * MiB,
  unpacked_bytes: 2048 * MiB,
  entries: 200_000,
  ratio: 100,
}

/**
 * The tool's limits: `"agentcli": {"update": {"limits": {"archive_bytes": …}}}` in package.json (declared by the
 * author, so no environment can raise them). A value that is not a positive whole number is `E_CONFIG` with
 * `allowed`/`got`.
 */
export function updateLimits(config: ToolConfig): UpdateLimits {
  const update = readToolSettings(config).update as { limits?: Record<string, unknown> } | undefined
  const out = { ...DEFAULT_UPDATE_LIMITS }
  for (const [key, value] of Object.entries(update?.limits ?? {})) {
    if (!(key in out))
      throw new AgentError('E_CONFIG', `unknown update limit "${key}" in package.json`, {
        details: { setting: `agentcli.update.limits.${key}`, allowed: Object.keys(out), got: key },
      })
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
      throw new AgentError('E_CONFIG', `agentcli.update.limits.${key} must be a positive whole number`, {
        details: { setting: `agentcli.update.limits.${key}`, allowed: `1..${Number.MAX_SAFE_INTEGER}`, got: value },
      })
    out[key as keyof UpdateLimits] = value
  }
  return out
}

/**
 * A release part over its declared limit: `E_INTEGRITY` `too_large` (exit 1, not retryable: the same source sends
 * the same bytes again; nothing installed changed). `what` names the asset or the archive entry, `where` its URL
 * or path; `got` is what was seen (at least, when counting stopped at the limit), null when not counted.
 */
export function tooLarge(
  limit: keyof UpdateLimits,
  bound: number,
  got: number | null,
  fields: { stage: UpdateStage; what: string; where: string; atLeast?: boolean },
): AgentError {
  const unit = limit === 'entries' || limit === 'ratio' ? '' : ' bytes'
  return integrityError(
    'too_large',
    `${fields.what} is over the update's limit: ${got === null ? 'more' : `${fields.atLeast ? 'at least ' : ''}${got}${unit}`}, ${limit} allows ${bound}${unit}`,
    {
      stage: fields.stage,
      name: fields.what,
      path: fields.where,
      limit: bound,
      got,
      setting: `agentcli.update.limits.${limit}`,
    },
  )
}
