import { AgentError } from '../errors/agent-error.js'

/**
 * The optional peer dependencies of agentcli: what each feature needs and the one command that installs it. A
 * tool installs only the ones it uses; the framework loads each lazily, when the feature is first used.
 */
export const OPTIONAL_PACKAGES = {
  postgres: { packages: ['pg', 'pg-boss'], feature: 'a postgres:// state URL (fleet mode)', dev: false },
  redis: { packages: ['ioredis', 'bullmq'], feature: 'a redis:// state URL (fleet mode)', dev: false },
  keychain: { packages: ['@napi-rs/keyring'], feature: 'the OS keychain', dev: false },
  update: {
    packages: ['@sigstore/bundle', '@sigstore/protobuf-specs', '@sigstore/tuf', '@sigstore/verify'],
    feature: 'verifying a release (update)',
    dev: false,
  },
  // Only `agentcli verify` runs it: a development dependency of the tool (`agentcli init` puts it there), not a
  // peer: npm installs a peer that the tool has among its devDependencies even with `--omit=dev`.
  verify: { packages: ['ajv', 'ajv-formats'], feature: 'agentcli verify (output schema checks)', dev: true },
  // Only `agentcli-build` runs it, for a tool with `agentcli.bundle`: a development dependency too.
  build: { packages: ['esbuild'], feature: "agentcli-build (the tool's bundle)", dev: true },
} as const

/** A feature whose packages are optional peers of agentcli. */
export type OptionalFeature = keyof typeof OPTIONAL_PACKAGES

/** The command that installs a feature's packages into the tool. */
export function installCommand(feature: OptionalFeature): string {
  const { packages, dev } = OPTIONAL_PACKAGES[feature]
  return `npm install ${dev ? '--save-dev ' : ''}${packages.join(' ')}`
}

/** True when `error` says that one of `feature`'s packages itself is not installed (not one of its imports). */
export function isMissing(error: unknown, feature: OptionalFeature): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  // Node names the package it could not find as `'name'` or `"name"`, with or without a subpath.
  return OPTIONAL_PACKAGES[feature].packages.some((name) =>
    new RegExp(`['"]${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(/[^'"]*)?['"]`).test(String(message)),
  )
}

/** The `E_CONFIG` a missing optional package answers: which feature needs it and the exact install command. */
export function missingError(feature: OptionalFeature, cause?: unknown): AgentError {
  const { packages, feature: what } = OPTIONAL_PACKAGES[feature]
  const fix = installCommand(feature)
  return new AgentError('E_CONFIG', `${what} needs ${packages.join(' and ')}, not installed: ${fix}`, {
    details: { reason: 'optional_dependency_missing', missing: [...packages], fix },
    cause,
  })
}

/**
 * Load an optional package with `load` (a literal `import()`, so bundlers see it); a package that is not
 * installed is an `E_CONFIG` naming the install command, any other failure is rethrown as it is.
 */
export async function loadOptional<T>(feature: OptionalFeature, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    throw isMissing(error, feature) ? missingError(feature, error) : error
  }
}
