import { existsSync, readFileSync, statSync } from 'node:fs'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import semver from 'semver'
import { AgentError } from '../../errors/agent-error.js'

/**
 * Refuse to start on a Node.js the framework does not support, before anything is written: on an older Node a
 * later step (rendering the skill, the tool's own build) would fail with a message about that step instead.
 */
export function checkEngine(range: string | undefined, version: string = process.versions.node): void {
  if (range === undefined || semver.satisfies(version, range, { includePrerelease: true })) return
  throw new AgentError('E_CONFIG', `agentcli needs Node.js ${range} (this is v${version}); nothing was written`, {
    details: {
      reason: 'unsupported_node',
      got: `v${version}`,
      allowed: range,
      fix: `run init with a supported Node.js (${range}), e.g. after \`nvm install 24\``,
    },
  })
}

/** How the new tool depends on agentcli: the spec in its package.json, and the npm settings that spec needs. */
export type FrameworkSpec = { spec: string; npmrc?: string }

/**
 * The agentcli dependency of a new tool. A registry spec (a range, a tag, a URL) is kept. A local one — `file:<path>`
 * or a bare path to a packed tarball or to a built agentcli directory (a checkout) — is checked now and rewritten
 * relative to the tool, since npm reads it from the tool's package.json while the author typed it from where they
 * stand. A directory also gets `install-links=true` in the tool's `.npmrc`: without it npm only symlinks the
 * directory and installs none of agentcli's own dependencies, so every command of the tool would fail to load.
 */
export function frameworkSpec(got: string, dir: string): FrameworkSpec {
  const local = /^file:(.+)$/.exec(got)?.[1] ?? (looksLikePath(got) ? got : undefined)
  if (local === undefined) return { spec: got }
  const path = resolve(local)
  const refuse = (why: string, fix: string) =>
    new AgentError('E_VALIDATION', `--agentcli ${got}: ${why}`, {
      details: {
        param: '--agentcli',
        got,
        allowed: 'an npm spec, a packed agentcli tarball or a built agentcli checkout',
        fix,
      },
    })
  if (!existsSync(path))
    throw refuse(`${path} does not exist`, 'pass the path of agentcli-<version>.tgz (npm pack) or of a built checkout')
  const spec = `file:${isAbsolute(local) ? path : relative(dir, path).split(sep).join('/')}`
  if (!statSync(path).isDirectory()) return { spec }
  const pjson = join(path, 'package.json')
  const name = existsSync(pjson) ? (JSON.parse(readFileSync(pjson, 'utf8')) as { name?: string }).name : undefined
  if (name !== 'agentcli')
    throw refuse(`${path} is not an agentcli package directory`, 'pass the root of an agentcli checkout')
  if (!existsSync(join(path, 'dist', 'index.js')))
    throw refuse(`${path} is not built (no dist/)`, `build it first: cd ${path} && npm ci && npm run build`)
  return {
    spec,
    npmrc:
      '# agentcli is a local directory: install it as a copy with its own dependencies, not as a bare symlink.\n# Remove this line once agentcli comes from the registry.\ninstall-links=true\n',
  }
}

/** A bare path (not an npm spec): what starts like one or names an existing tarball. */
function looksLikePath(got: string): boolean {
  return /^(\.{1,2}([/\\]|$)|\/)/.test(got) || (/\.tgz$/.test(got) && existsSync(got))
}
