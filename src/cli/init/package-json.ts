/** The parts of agentcli's own package.json a new tool inherits. */
export type FrameworkPackage = {
  version: string
  engines?: { node?: string }
  devDependencies?: Record<string, string>
}

/**
 * The build tools a new tool needs, at the versions agentcli itself is built and tested with: the compiler, the
 * bundler, and the schema validator `agentcli verify` checks outputs with. None is a dependency of agentcli, so a
 * production install of the tool (`npm install --omit=dev`) leaves them all out.
 */
const DEV_DEPENDENCIES = ['@types/node', 'ajv', 'ajv-formats', 'esbuild', 'typescript'] as const
const FALLBACK: Record<(typeof DEV_DEPENDENCIES)[number], string> = {
  '@types/node': '^24.0.0',
  ajv: '^8.20.0',
  'ajv-formats': '^3.0.1',
  esbuild: '^0.28.0',
  typescript: '^6.0.0',
}

/**
 * The package.json of a new tool: its bin, the explicit command strategy with the bundle on (one file holds the
 * tool, the framework and oclif), the build that checks its skill file, and honest release-readiness evidence.
 */
export function toolPackageJson(
  name: string,
  bin: string,
  agentcli: string,
  framework: FrameworkPackage,
): Record<string, unknown> {
  return {
    name,
    version: '0.1.0',
    description: `${bin}: an agent-native command-line tool built on agentcli.`,
    type: 'module',
    engines: { node: framework.engines?.node ?? '>=22' },
    bin: { [bin]: 'bin/run.js' },
    files: ['bin', 'dist', 'oclif.manifest.json', 'agentcli.meta.json', 'skills', 'CHANGELOG.md'],
    scripts: {
      build: 'tsc -p tsconfig.json && agentcli-build --skill check .',
      skills: 'tsc -p tsconfig.json && agentcli-build --skill write .',
      test: 'npm run build && node --test',
      verify: 'agentcli verify --fuzz 500 --seed 1 --format text -- node bin/run.js',
      prepack: 'npm run build',
    },
    dependencies: { agentcli },
    devDependencies: Object.fromEntries(
      DEV_DEPENDENCIES.map((dep) => [dep, framework.devDependencies?.[dep] ?? FALLBACK[dep]]),
    ),
    oclif: {
      bin,
      dirname: bin,
      commands: { strategy: 'explicit', target: './dist/index.js', identifier: 'COMMANDS' },
      topicSeparator: ' ',
    },
    agentcli: {
      bundle: true,
      release_readiness: {
        level: 'beta',
        fcc_status: 'verified',
        mock_upstream_status: 'not_applicable',
        live_smoke_status: 'missing',
      },
    },
  }
}

/** npm's rules for a package name, and the bin it gives (the name without its scope). */
export function toolNames(name: string): { name: string; bin: string } | undefined {
  if (name.length > 214 || !/^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/.test(name)) return undefined
  return { name, bin: name.replace(/^@[^/]+\//, '') }
}
