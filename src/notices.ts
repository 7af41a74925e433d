import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import { writeJsonAtomic } from './fs/json-file.js'
import type { Notice } from './output/envelope.js'

/** The update-notice cache in the tool's cache dir; written by `update --check`, read by every command. */
export const NOTICE_CACHE_FILE = 'update-notice.json'

/** What the cache holds. */
export type NoticeCache = {
  latest_version: string
  checked_at: string
  install_method: string
  recommended_command: string
  release_url: string | null
  severity: 'info' | 'warning'
}

/**
 * The `update_available` notice, from the local cache only (spec 002 §14: `context` and `--help` never touch the
 * network). A missing or unreadable cache means no notice, never an error.
 */
export function readUpdateNotice(cacheDir: string, currentVersion: string): Notice | undefined {
  let cache: NoticeCache
  try {
    cache = JSON.parse(readFileSync(join(cacheDir, NOTICE_CACHE_FILE), 'utf8')) as NoticeCache
  } catch {
    return undefined
  }
  if (
    !semver.valid(cache.latest_version) ||
    !semver.valid(currentVersion) ||
    !semver.gt(cache.latest_version, currentVersion)
  )
    return undefined
  return {
    type: 'update_available',
    current_version: currentVersion,
    latest_version: cache.latest_version,
    install_method: cache.install_method,
    recommended_command: cache.recommended_command,
    release_url: cache.release_url,
    checked_at: cache.checked_at,
    severity: cache.severity === 'warning' ? 'warning' : 'info',
    message: `${cache.latest_version} is available (running ${currentVersion}): ${cache.recommended_command}`,
  }
}

/** Record what `update --check` learned; every later command reads it for `meta.notices`. */
export async function writeUpdateNotice(cacheDir: string, cache: NoticeCache): Promise<void> {
  await writeJsonAtomic(join(cacheDir, NOTICE_CACHE_FILE), cache, { mode: 0o644, dirMode: 0o755 })
}

/** Forget the notice (after an update). */
export function clearUpdateNotice(cacheDir: string): void {
  rmSync(join(cacheDir, NOTICE_CACHE_FILE), { force: true })
}
