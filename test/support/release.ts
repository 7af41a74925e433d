import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from './helpers.js'

const BUILD = join(ROOT, 'bin/agentcli-build.js')
const PARTS = ['bin', 'dist', 'package.json', 'oclif.manifest.json', 'agentcli.meta.json', 'skills', 'CHANGELOG.md']

function copyTool(target: string): void {
  mkdirSync(target, { recursive: true })
  for (const part of PARTS) cpSync(join(ROOT, 'examples/tasks', part), join(target, part), { recursive: true })
}

/**
 * A standalone install of the example tool at 0.1.0, inside the repository so its imports resolve. `update`
 * is merged into the installed package.json's `agentcli.update` (trust settings come only from there).
 */
export function makeInstall(update: Record<string, unknown> = {}): { root: string; bin: string; cleanup(): void } {
  const root = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-install-'))
  copyTool(join(root, 'versions', '0.1.0'))
  const pjsonPath = join(root, 'versions', '0.1.0', 'package.json')
  const pjson = JSON.parse(readFileSync(pjsonPath, 'utf8'))
  pjson.agentcli.update = { ...pjson.agentcli.update, ...update }
  writeFileSync(pjsonPath, JSON.stringify(pjson, null, 2))
  symlinkSync('versions/0.1.0', join(root, 'current'))
  mkdirSync(join(root, 'bin'))
  writeFileSync(join(root, 'bin', 'tasks'), '#!/bin/sh\nexec node "$(dirname "$0")/../current/bin/run.js" "$@"\n', {
    mode: 0o755,
  })
  return {
    root,
    bin: join(root, 'current', 'bin', 'run.js'),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

/**
 * A copy of the example tool at `version` in `<stage>/tasks` (inside the repository, so its build resolves),
 * with a changelog entry for that version, built. `edit` may change its package.json first. `build: false` skips
 * the build, for a copy only checks that read its package.json see (preflight): it keeps the example's built files.
 */
export function makeToolCopy(
  stage: string,
  version: string,
  edit: (pjson: Record<string, unknown>) => Record<string, unknown> = (p) => p,
  options: { build?: boolean } = {},
): string {
  const dir = join(stage, 'tasks')
  copyTool(dir)
  const pjsonPath = join(dir, 'package.json')
  writeFileSync(pjsonPath, JSON.stringify(edit({ ...JSON.parse(readFileSync(pjsonPath, 'utf8')), version }), null, 2))
  const changelog = readFileSync(join(dir, 'CHANGELOG.md'), 'utf8').replace(
    '## [Unreleased]',
    `## [Unreleased]\n\n## [${version}] - 2026-11-30\n\n### Added\n\n- Everything in ${version}.`,
  )
  writeFileSync(join(dir, 'CHANGELOG.md'), changelog)
  if (options.build === false) return dir
  // One build: `--skill write` builds the tool whole (manifest, bundle, changelog) before it renders the skill.
  const r = spawnSync(process.execPath, [BUILD, '--skill', 'write', dir], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(r.stderr)
  return dir
}

/** A release tarball: its asset name and bytes. */
export type Release = { name: string; bytes: Buffer }

/**
 * A release tarball of the example tool at `version`, built the way a release workflow would; `mutate` edits
 * the built tree before it is packed (to make a release that is signed correctly but broken).
 */
export async function makeRelease(version: string, options: { mutate?: (dir: string) => void } = {}): Promise<Release> {
  return (await makeReleases(version, { release: options.mutate })).release
}

/**
 * Several release tarballs of the example tool at `version` from one build (a build is seconds; a copy of the
 * built tree is not): each entry's `mutate` (none: the release as built) edits its own copy before it is packed.
 * Packed once per content: a tarball is kept under test/fixtures/.tmp-release-cache/, keyed by the example's and
 * agentcli's built files, the version and the mutation's source, so the files of one run (and its workers) share
 * one build.
 */
export async function makeReleases<K extends string>(
  version: string,
  variants: Record<K, ((dir: string) => void) | undefined>,
): Promise<Record<K, Release>> {
  const name = `tasks-v${version}-${process.platform}-${process.arch}.tar.gz`
  const cached = (key: K) => join(cacheDir(), `${digest(`${version}\0${String(variants[key] ?? 'as built')}`)}.tar.gz`)
  const out = {} as Record<K, Release>
  const missing = (Object.keys(variants) as K[]).filter((key) => !existsSync(cached(key)))
  if (missing.length > 0) {
    const stage = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-release-'))
    try {
      const built = makeToolCopy(stage, version)
      const { create } = await import('tar')
      for (const key of missing) {
        const variant = join(stage, 'variants', key)
        cpSync(built, join(variant, 'tasks'), { recursive: true, verbatimSymlinks: true })
        variants[key]?.(join(variant, 'tasks'))
        const file = join(variant, 'out.tar.gz')
        await create({ gzip: true, file, cwd: variant, portable: true }, ['tasks'])
        // Another worker may pack the same release at once: each renames a whole file into place.
        renameSync(file, cached(key))
      }
    } finally {
      rmSync(stage, { recursive: true, force: true })
    }
  }
  for (const key of Object.keys(variants) as K[]) out[key] = { name, bytes: readFileSync(cached(key)) }
  return out
}

const CACHE = join(ROOT, 'test/fixtures/.tmp-release-cache')
let contentKey: string | undefined

/** The cache of this content (the built example, agentcli's dist, the build script); older contents' are removed. */
function cacheDir(): string {
  if (!contentKey) {
    const hash = createHash('sha256')
    const add = (path: string): void => {
      if (statSync(path).isDirectory()) for (const entry of readdirSync(path).sort()) add(join(path, entry))
      else hash.update(`${relative(ROOT, path)}\0`).update(readFileSync(path))
    }
    for (const part of PARTS) add(join(ROOT, 'examples/tasks', part))
    add(join(ROOT, 'dist'))
    add(BUILD)
    contentKey = hash.digest('hex').slice(0, 16)
    mkdirSync(join(CACHE, contentKey), { recursive: true })
    for (const old of readdirSync(CACHE))
      if (old !== contentKey) rmSync(join(CACHE, old), { recursive: true, force: true })
  }
  return join(CACHE, contentKey)
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16)

/** Every file under a directory with its bytes (links as their target), to prove nothing changed. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, name.name)
      if (name.isSymbolicLink()) out[relative(dir, path)] = `-> ${readlinkSafe(path)}`
      else if (name.isDirectory()) walk(path)
      else out[relative(dir, path)] = `${statSync(path).size}:${readFileSync(path).toString('base64').slice(0, 4096)}`
    }
  }
  walk(dir)
  return out
}

function readlinkSafe(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return '?'
  }
}
