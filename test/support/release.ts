import { spawnSync } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
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
 */
export async function makeReleases<K extends string>(
  version: string,
  variants: Record<K, ((dir: string) => void) | undefined>,
): Promise<Record<K, Release>> {
  const stage = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-release-'))
  try {
    const built = makeToolCopy(stage, version)
    const { create } = await import('tar')
    const out = {} as Record<K, Release>
    for (const [key, mutate] of Object.entries(variants) as Array<[K, ((dir: string) => void) | undefined]>) {
      const variant = join(stage, 'variants', key)
      cpSync(built, join(variant, 'tasks'), { recursive: true, verbatimSymlinks: true })
      mutate?.(join(variant, 'tasks'))
      const file = join(variant, 'out.tar.gz')
      await create({ gzip: true, file, cwd: variant, portable: true }, ['tasks'])
      out[key] = { name: `tasks-v${version}-${process.platform}-${process.arch}.tar.gz`, bytes: readFileSync(file) }
    }
    return out
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

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
