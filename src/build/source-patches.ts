/**
 * One edit the bundle makes to a third-party file: in `file` of `package` (as installed, relative to the
 * package's root), the text `find` occurs exactly `count` times (once when omitted) and each becomes `replace`.
 * A patch whose text is not found fails the build (see `sourcePatches()`), and `test/cli/build/source-patches.test.ts`
 * checks every patch against the installed versions, so an upgrade cannot silently undo one.
 */
export type SourcePatch = {
  /** A short name, for messages and measurements. */
  name: string
  package: string
  file: string
  find: string
  replace: string
  count?: number
  /**
   * Why the behaviour is unchanged, and what it saves: CPU time of a bundled `tasks list` (process.cpuUsage at
   * exit, median of 61 alternated rounds, each bundle built without this one patch against one with all).
   */
  why: string
}

/**
 * Every edit the bundle makes to third-party source, in one place. Measured and left out because they saved
 * nothing measurable: getters for oclif's terminal widths (the renderer creates stdout and stderr anyway) and
 * skipping fdir's `require.resolve` of picomatch.
 */
export const SOURCE_PATCHES: readonly SourcePatch[] = [
  {
    name: 'plain-id-sort',
    package: '@oclif/core',
    file: 'lib/config/plugin.js',
    find: '.sort((a, b) => a.id.localeCompare(b.id))',
    replace: '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))',
    why: "The first localeCompare of a process builds an ICU collator (≈ 6 ms alone; 5.0 ms of a `list`). Command ids are lowercase ASCII words joined by ':' and '-', which code-point order sorts the same way.",
  },
  {
    name: 'wsl-without-powershell',
    package: '@oclif/core',
    file: 'lib/util/os.js',
    find: "return (await import('wsl-utils')).isWsl ? 'wsl' : (0, node_os_1.platform)();",
    replace: "return (await import('is-wsl')).default ? 'wsl' : (0, node_os_1.platform)();",
    why: "Config.load asks whether this is WSL; wsl-utils answers with is-wsl's value but first evaluates its PowerShell helpers, which load child_process. is-wsl alone gives the same answer (0.8 ms of a `list`).",
  },
  {
    name: 'debug-only-when-asked',
    package: '@oclif/core',
    file: 'lib/logger.js',
    find: 'const debug_1 = __importDefault(require("debug"));',
    replace:
      'const debug_1 = process.env.DEBUG ? __importDefault(require("debug")) : { default: () => Object.assign(() => {}, { enabled: false }) };',
    why: 'debug reads DEBUG once, at load: with it unset every logger is off, so a no-op logger is the same, and debug, supports-color and ms are not evaluated (0.4 ms of a `list`).',
  },
  {
    name: 'no-engine-warning',
    package: '@oclif/core',
    file: 'lib/index.js',
    find: 'checkCWD();\ncheckNodeVersion();\n',
    replace: 'checkCWD();\n',
    why: "In a bundle this reads the tool's package.json through require and parses its engines range with semver; agentcli/boot has already checked both agentcli's and the tool's range (an E_CONFIG envelope, not a warning). 1.45 ms of a `list`.",
  },
]
