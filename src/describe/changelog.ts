import { readFileSync } from 'node:fs'
import { join } from 'node:path'
// semver's functions, not its index: the index evaluates every module of the package, ranges included (≈ 1 ms).
import semverGt from 'semver/functions/gt.js'
import semverRcompare from 'semver/functions/rcompare.js'
import semverValid from 'semver/functions/valid.js'
import { AgentError, validationError } from '../errors/agent-error.js'

/** Keep a Changelog change types, in the order the spec lists them. */
export const CHANGE_TYPES = ['added', 'changed', 'fixed', 'deprecated', 'removed', 'security'] as const

/** One released version. */
export type ChangelogEntry = {
  version: string
  date: string | null
  yanked: boolean
  changes: Record<(typeof CHANGE_TYPES)[number], string[]>
}

/** The file the build writes next to the manifest; the installed tool reads it instead of CHANGELOG.md. */
export const META_FILE = 'agentcli.meta.json'

/** What the build embeds. */
export type ToolMeta = { changelog: ChangelogEntry[] }

/**
 * Parse a Keep a Changelog file (build time). Unreleased is left out; the newest release must be the package
 * version, so a release can never ship with a changelog that does not describe it.
 */
export async function parseChangelog(markdown: string, packageVersion: string): Promise<ChangelogEntry[]> {
  const { parser } = await import('keep-a-changelog')
  const changelog = parser(markdown)
  const entries: ChangelogEntry[] = []
  for (const release of changelog.releases) {
    if (!release.version) continue
    const changes = Object.fromEntries(
      CHANGE_TYPES.map((type) => [type, (release.changes.get(type) ?? []).map((c) => c.title)]),
    ) as ChangelogEntry['changes']
    entries.push({
      version: release.version,
      date: release.date ? release.date.toISOString().slice(0, 10) : null,
      yanked: release.yanked,
      changes,
    })
  }
  entries.sort((a, b) => semverRcompare(a.version, b.version))
  const top = entries[0]?.version
  if (top !== packageVersion) {
    throw new Error(`CHANGELOG.md's newest release is ${top ?? 'missing'}, but package.json says ${packageVersion}`)
  }
  return entries
}

/** Read the embedded metadata of an installed tool. */
export async function readToolMeta(root: string): Promise<ToolMeta> {
  const path = join(root, META_FILE)
  try {
    // Synchronous: node:fs/promises (and readline's interface with it) is ≈ 2 ms of a `changelog` start.
    return JSON.parse(readFileSync(path, 'utf8')) as ToolMeta
  } catch (error) {
    throw new AgentError('E_IO', `cannot read the embedded changelog ${path}`, {
      details: { path, fix: 'rebuild the tool with agentcli-build' },
      cause: error,
    })
  }
}

/** Entries strictly newer than `since` (semver), newest first. */
export function changesSince(entries: readonly ChangelogEntry[], since: string | undefined): ChangelogEntry[] {
  if (since === undefined) return [...entries]
  const valid = semverValid(since)
  if (!valid)
    throw validationError(`--since must be a semantic version such as 1.0.3 (got: '${since}')`, 'x.y.z', since, {
      param: '--since',
    })
  return entries.filter((e) => semverGt(e.version, valid))
}
