// Synchronous: node:fs/promises would load readline's interface and the stream stack for doctor.
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { TrustRootOptions } from './trust-root.js'

/** Where the trusted root the next update verifies against comes from, as `doctor` reports it. */
export type TrustRootReport = {
  /** `pinned`: the tool's own trusted_root.json; `tuf_cache`: the copy TUF verified and cached at the last
   * refresh; `tuf_seed`: none fetched yet (the first update fetches it, verified from the shipped TUF root). */
  source: 'pinned' | 'tuf_cache' | 'tuf_seed'
  /** The file in use (the pinned file, or the cached trusted_root.json); null for the seed. */
  path: string | null
  /** The TUF repository it is refreshed from; null when pinned. */
  mirror: string | null
  /** When it was last refreshed (TUF) or written (pinned); null before the first refresh. */
  fetched_at: string | null
  /** When the TUF root metadata it is anchored in expires (public-good: months); null when pinned or unknown. */
  expires_at: string | null
  /** Until when the cached copy verifies without reaching the mirror (its earliest signed expiry). */
  offline_until: string | null
  /** Whole days since `fetched_at`. */
  age_days: number | null
}

const DAY = 86_400_000
const ROLES = ['root', 'timestamp', 'snapshot', 'targets'] as const

/** `signed.expires` of a TUF metadata document, or undefined when it has none that parses. */
function expiresOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  try {
    const when = Date.parse(String((JSON.parse(text) as { signed?: { expires?: unknown } }).signed?.expires))
    return Number.isNaN(when) ? undefined : when
  } catch {
    return undefined
  }
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())
const age = (from: number, now: number) => Math.max(0, Math.floor((now - from) / DAY))
const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}
/** A file's mtime, or undefined when it cannot be stat'ed. */
const mtime = (path: string): number | undefined => {
  try {
    return statSync(path).mtimeMs
  } catch {
    return undefined
  }
}

/** The root.json a TUF refresh starts from: the tool's own `tuf_root`, else the seed @sigstore/tuf ships. */
async function shippedRoot(options: Pick<TrustRootOptions, 'mirror' | 'tufRoot'>): Promise<string | undefined> {
  if (options.tufRoot) return read(options.tufRoot)
  try {
    const seeds = createRequire(import.meta.url)('@sigstore/tuf/seeds.json') as Record<
      string,
      { 'root.json'?: string } | undefined
    >
    const seed = seeds[options.mirror]?.['root.json']
    return seed === undefined ? undefined : Buffer.from(seed, 'base64').toString('utf8')
  } catch {
    // The optional peer is not installed: nothing shipped to read.
    return undefined
  }
}

/**
 * Report, offline and without changing anything, the Sigstore trusted root the next update would verify
 * against, its age and its expiry: the pinned file; else the copy TUF cached at its last refresh (in
 * `<cacheDir>/sigstore-tuf/<mirror>/`, where @sigstore/tuf keeps it); else the shipped TUF root it starts from.
 * Nothing here is trusted for verification: `loadTrustedRoot` verifies everything again when it is used.
 */
export async function trustRootReport(
  options: Omit<TrustRootOptions, 'timeoutMs'>,
  now = Date.now(),
): Promise<TrustRootReport> {
  if (options.pinned) {
    const written = mtime(options.pinned)
    return {
      source: 'pinned',
      path: options.pinned,
      mirror: null,
      fetched_at: iso(written),
      expires_at: null,
      offline_until: null,
      age_days: written === undefined ? null : age(written, now),
    }
  }
  const url = new URL(options.mirror)
  const dir = join(options.cacheDir, 'sigstore-tuf', encodeURIComponent(url.host + url.pathname.replace(/\/$/, '')))
  const texts = ROLES.map((role) => read(join(dir, `${role}.json`)))
  const expiries = texts.map(expiresOf)
  // A refresh writes timestamp.json (a seeded cache has root.json alone): without it nothing was fetched yet.
  const fetched = mtime(join(dir, 'timestamp.json'))
  if (fetched !== undefined && expiries.every((e) => e !== undefined)) {
    return {
      source: 'tuf_cache',
      path: join(dir, 'targets', 'trusted_root.json'),
      mirror: options.mirror,
      fetched_at: iso(fetched),
      expires_at: iso(expiries[0]),
      offline_until: iso(Math.min(...(expiries as number[]))),
      age_days: age(fetched, now),
    }
  }
  return {
    source: 'tuf_seed',
    path: null,
    mirror: options.mirror,
    fetched_at: null,
    expires_at: iso(expiresOf(await shippedRoot(options))),
    offline_until: null,
    age_days: null,
  }
}
