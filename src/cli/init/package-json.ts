import { isBuiltin } from 'node:module'

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

/**
 * What `init` accepts as a tool's package name: what npm publishes, narrowed to what the tool can then use. The
 * bin (the name without its scope) names the skill directory (`skills/<bin>/`, the Agent Skills name rule) and
 * the environment prefix (`<BIN>_`, a shell variable name), so it is lowercase letters, digits and single hyphens,
 * starting with a letter, at most 64 characters. That also keeps out npm's reserved and Node's own module names.
 */
export const TOOL_NAME_RULE =
  'lowercase letters, digits and single hyphens (e.g. my-tool): starting with a letter, not ending with a hyphen, at most 64 characters, not a Node.js core module name; optionally under a scope (@scope/my-tool, the scope of lowercase letters, digits, -, . and _, starting with a letter or digit); 214 characters at most in all'

const BIN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/
const SCOPE = /^@[a-z0-9][a-z0-9._-]*$/

/** npm's rules for a package name and the templates' for its bin (the name without its scope), or undefined. */
export function toolNames(name: string): { name: string; bin: string } | undefined {
  if (name.length > 214) return undefined
  const parts = name.split('/')
  const [scope, bin] = parts.length === 2 ? parts : [undefined, parts[0]!]
  if (parts.length > 2 || (scope !== undefined && !SCOPE.test(scope))) return undefined
  if (bin === undefined || bin.length > 64 || !BIN.test(bin)) return undefined
  // npm refuses a new unscoped package named like a core module (`http`, `fs`).
  if (scope === undefined && isBuiltin(bin)) return undefined
  return { name, bin }
}
