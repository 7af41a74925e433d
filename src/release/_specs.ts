import semver from 'semver'

const DIST_TAG = /^[a-z][a-z0-9._-]*$/i

/**
 * Whether a dependency spec resolves from the registry: a semver range or version, an `npm:` alias to one, or a
 * dist-tag. `file:`, `link:`, `workspace:`, git, GitHub shorthand and URLs do not: a staged install would either
 * fail or silently depend on the machine that built it.
 */
export function isRegistrySpec(spec: string): boolean {
  const alias = /^npm:((?:@[^/@\s]+\/)?[^/@\s]+)(?:@(.+))?$/.exec(spec)
  const range = alias ? (alias[2] ?? 'latest') : spec
  if (semver.validRange(range) !== null) return true
  return DIST_TAG.test(range) && !range.includes(':')
}

/** The runtime dependencies of a package.json that do not come from the registry, as `name@spec`. */
export function nonRegistryDependencies(pjson: {
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}): string[] {
  const all = { ...pjson.dependencies, ...pjson.optionalDependencies }
  return Object.entries(all)
    .filter(([, spec]) => !isRegistrySpec(spec))
    .map(([name, spec]) => `${name}@${spec}`)
}
