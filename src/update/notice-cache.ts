import { readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { writeJsonAtomic } from '../fs/json-file.js'
import type { Notice } from '../output/envelope.js'
// Not semver itself: every start reads the notice, and evaluating semver builds its regular expressions.
import { versionGt, versionValid } from './plain-version.js'

/** The update-notice cache in the tool's cache dir; written by `update --check`, read by every command. */
export const NOTICE_CACHE_FILE = 'update-notice.json'

/** What the cache holds: the latest release the last `update --check` saw (also when it is the running one). */
export type NoticeCache = {
  latest_version: string
  checked_at: string
  install_method: string
  /** How to update; null when the check found nothing newer. */
  recommended_command: string | null
  release_url: string | null
  severity: 'info' | 'warning'
  /** Where and on which channel it checked (`checkedSource`; `doctor` reuses a recent check of the same); absent in older caches. */
  source?: string
  channel?: string
}

/** What was last known about releases: `context` reports it, an offline `update --check` falls back on it. */
export type LastCheck = { latest: string; checked_at: string }

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0

/** Whether a parsed cache file has the shape {@link writeUpdateNotice} writes; anything else is corrupt. */
export function isNoticeCache(value: unknown): value is NoticeCache {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const c = value as Record<string, unknown>
  return (
    isText(c.latest_version) &&
    versionValid(c.latest_version) !== null &&
    isText(c.checked_at) &&
    isText(c.install_method) &&
    (c.recommended_command === null || isText(c.recommended_command)) &&
    (c.release_url === null || typeof c.release_url === 'string') &&
    (c.severity === 'info' || c.severity === 'warning') &&
    (c.source === undefined || isText(c.source)) &&
    (c.channel === undefined || isText(c.channel))
  )
}

/** A cache is advisory: a corrupt one is dropped (best effort), so the next `update --check` writes a fresh one. */
function discard(path: string): void {
  try {
    rmSync(path, { force: true, recursive: true })
  } catch {
    // An undeletable cache is still only ignored.
  }
}

/** The cache as written, or undefined: missing, unreadable or corrupt (a corrupt one is removed). */
export function readNoticeCache(cacheDir: string): NoticeCache | undefined {
  const path = join(cacheDir, NOTICE_CACHE_FILE)
  // Most runs find none: a stat says so without the exception a failed read costs (every call of an MCP server's
  // read runs this).
  let text: string
  try {
    if (!statSync(path, { throwIfNoEntry: false })) return undefined
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EISDIR') discard(path)
    return undefined
  }
  let cache: unknown
  try {
    cache = JSON.parse(text)
  } catch {
    cache = undefined
  }
  if (!isNoticeCache(cache)) {
    discard(path)
    return undefined
  }
  return cache
}

/**
 * The `update_available` notice, from the local cache only (spec 002 §14: `context` and `--help` never touch the
 * network). A missing, unreadable or corrupt cache (not JSON, `null`, a wrong shape) means no notice, never an
 * error; a corrupt one is removed.
 */
export function readUpdateNotice(cacheDir: string, currentVersion: string): Notice | undefined {
  const cache = readNoticeCache(cacheDir)
  if (!cache?.recommended_command) return undefined
  if (!versionValid(currentVersion) || !versionGt(cache.latest_version, currentVersion)) return undefined
  return {
    type: 'update_available',
    current_version: currentVersion,
    latest_version: cache.latest_version,
    install_method: cache.install_method,
    recommended_command: cache.recommended_command,
    release_url: cache.release_url,
    checked_at: cache.checked_at,
    severity: cache.severity,
    message: `${cache.latest_version} is available (running ${currentVersion}): ${cache.recommended_command}`,
  }
}

/** The latest release the last `update --check` saw and when, from the cache only; null when none is known. */
export function readLastCheck(cacheDir: string): LastCheck | null {
  const cache = readNoticeCache(cacheDir)
  return cache ? { latest: cache.latest_version, checked_at: cache.checked_at } : null
}

/**
 * Record what `update --check` learned; every later command reads it for `meta.notices`. Whatever sits at the
 * path (a corrupt file, a directory) is replaced; a cache that cannot be written is skipped, never an error.
 */
export async function writeUpdateNotice(cacheDir: string, cache: NoticeCache): Promise<void> {
  const path = join(cacheDir, NOTICE_CACHE_FILE)
  try {
    await writeJsonAtomic(path, cache, { mode: 0o644, dirMode: 0o755 })
  } catch {
    discard(path)
    await writeJsonAtomic(path, cache, { mode: 0o644, dirMode: 0o755 }).catch(() => undefined)
  }
}

/** Forget the notice (after an update); a cache that cannot be removed is left to be ignored. */
export function clearUpdateNotice(cacheDir: string): void {
  discard(join(cacheDir, NOTICE_CACHE_FILE))
}
