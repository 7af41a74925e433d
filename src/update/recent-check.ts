import { readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { writeJsonAtomic } from '../fs/json-file.js'
import { type NoticeCache, readNoticeCache } from './notice-cache.js'
import type { UpdateSettings } from './settings.js'

/**
 * How long `doctor` answers its update check from the last check of the same release source and channel that
 * reached it (the notice cache, which `update --check` and `doctor` write): a network round trip, and loading
 * Node's HTTP client for it, is most of a `doctor` run. Its message then says when that check was made.
 */
export const RECENT_CHECK_MS = 10 * 60_000

/**
 * How long a check that could not reach the source (`E_NETWORK`) is reported again instead of retried: short, so a
 * network that came back is seen on the next minute's `doctor`. Any other failure is never kept.
 */
export const RECENT_FAILURE_MS = 60_000

/** The file of the last failed check, beside the notice cache in the tool's cache dir. */
export const CHECK_FAILURE_FILE = 'update-check-failure.json'

/**
 * Where a check asks, as a recent check is matched: a GitHub repository with the API it is asked through, a mirror
 * URL, or a directory by its absolute path (a relative one names another directory from another working directory).
 * A URL is kept without its user info, query and fragment: the key is written to a cache others may read, and a
 * credential never is.
 */
export function checkedSource(settings: Pick<UpdateSettings, 'source' | 'repository' | 'github_api'>): string {
  if (settings.source === 'github') return `github:${settings.repository ?? ''}@${place(settings.github_api)}`
  if (/^https?:\/\//.test(settings.source)) return place(settings.source)
  return `dir:${resolve(settings.source)}`
}

/** A URL's origin and path; an unparsable one (which no check can reach) is named as such, never written out. */
function place(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return 'unparsable-url'
  }
}

/** What a recent check found, as `doctor` reports it. */
export type RecentCheck =
  | { ok: true; checked_at: string; cache: NoticeCache }
  | { ok: false; checked_at: string /** What the failed check said. */; message: string; fix: string }

type Failure = { source: string; channel: string; checked_at: string; message: string; fix: string }

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0

/** Whether `checkedAt` lies within the last `windowMs` of `now` (a time ahead of the clock is never recent). */
function recent(checkedAt: string, windowMs: number, now: number): boolean {
  const at = Date.parse(checkedAt)
  return Number.isFinite(at) && at <= now && now - at < windowMs
}

function readFailure(cacheDir: string): Failure | undefined {
  try {
    const value = JSON.parse(readFileSync(join(cacheDir, CHECK_FAILURE_FILE), 'utf8')) as Record<string, unknown>
    if (
      isText(value.source) &&
      isText(value.channel) &&
      isText(value.checked_at) &&
      isText(value.message) &&
      isText(value.fix)
    )
      return value as Failure
  } catch {
    // Missing or unreadable: no failure is known.
  }
  return undefined
}

/**
 * The most recent check of this source and channel still within its window: a success from the notice cache
 * ({@link RECENT_CHECK_MS}), or a network failure ({@link RECENT_FAILURE_MS}); undefined sends the caller to the
 * network. A success is used only when the cache agrees with itself for the running version (a newer release and
 * a recommended command, or neither).
 */
export function recentCheck(
  cacheDir: string,
  where: { source: string; channel: string; version: string },
  newer: (latest: string, current: string) => boolean,
  now = Date.now(),
): RecentCheck | undefined {
  const found: RecentCheck[] = []
  const cache = readNoticeCache(cacheDir)
  if (
    cache &&
    cache.source === where.source &&
    cache.channel === where.channel &&
    recent(cache.checked_at, RECENT_CHECK_MS, now) &&
    newer(cache.latest_version, where.version) === (cache.recommended_command !== null)
  )
    found.push({ ok: true, checked_at: cache.checked_at, cache })
  const failure = readFailure(cacheDir)
  if (
    failure &&
    failure.source === where.source &&
    failure.channel === where.channel &&
    recent(failure.checked_at, RECENT_FAILURE_MS, now)
  )
    found.push({ ok: false, checked_at: failure.checked_at, message: failure.message, fix: failure.fix })
  return found.sort((a, b) => Date.parse(b.checked_at) - Date.parse(a.checked_at))[0]
}

/** Remember a check that could not reach the source; best effort (a cache that cannot be written is skipped). */
export async function recordCheckFailure(cacheDir: string, failure: Failure): Promise<void> {
  await writeJsonAtomic(join(cacheDir, CHECK_FAILURE_FILE), failure, { mode: 0o644, dirMode: 0o755 }).catch(
    () => undefined,
  )
}

/** Forget a failed check once one reached the source. */
export function clearCheckFailure(cacheDir: string): void {
  try {
    rmSync(join(cacheDir, CHECK_FAILURE_FILE), { force: true })
  } catch {
    // Left behind, it ages out of its window.
  }
}
