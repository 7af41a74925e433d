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
    name: 'linear-arg-count',
    package: '@oclif/core',
    file: 'lib/parser/parse.js',
    find: 'const originalArgv = [...this.argv];\n        while (this.argv.length > 0) {',
    replace:
      'const originalArgv = [...this.argv];\n        let argCount = 0;\n        this.argv.reverse();\n        while (this.argv.length > 0) {',
    why: 'The parser names each positional token by counting the positional tokens before it (a filter of every token so far), which makes a batch of n ids cost n² (10,000 ids: 0.8 s). A counter, declared here and advanced where each positional token is recorded (`linear-arg-index`), gives the same index. The tokens still to read are turned into a stack here, for `linear-argv-stack`.',
  },
  {
    name: 'linear-argv-stack',
    package: '@oclif/core',
    file: 'lib/parser/parse.js',
    find: 'this.argv.shift()',
    replace: 'this.argv.pop()',
    count: 3,
    why: 'The parser takes each token with `shift()`, which moves every remaining token once the array is too large to trim in place (tens of thousands of ids: 0.6 s for 40,000). With the tokens reversed once (`linear-arg-count`), the next token is the last one, and `pop()` takes it without moving the others; `linear-argv-push` puts a token back where `pop()` finds it next, as `unshift()` did for `shift()`. The parser reads `this.argv` nowhere else while it parses.',
  },
  {
    name: 'linear-argv-push',
    package: '@oclif/core',
    file: 'lib/parser/parse.js',
    find: 'this.argv.unshift(',
    replace: 'this.argv.push(',
    count: 2,
    why: 'A token put back for the next read (the value after `--flag=`, the rest of a short-flag cluster) goes where `pop()` takes the next token from, on the stack `linear-arg-count` made: the same token is read next, as with `unshift()` and `shift()`.',
  },
  {
    name: 'linear-arg-index',
    package: '@oclif/core',
    file: 'lib/parser/parse.js',
    find: 'const arg = Object.keys(this.input.args)[this._argTokens.length];',
    replace: 'const arg = Object.keys(this.input.args)[argCount++];',
    why: 'The positional tokens recorded so far are exactly those pushed on this line, so the counter (see `linear-arg-count`) is the length the filter computed, without scanning every token recorded before.',
  },
  {
    name: 'linear-argv-order',
    package: '@oclif/core',
    file: 'lib/parser/parse.js',
    find: 'argv: unsortedArgv.sort((a, b) => originalArgv.indexOf(a) - originalArgv.indexOf(b)),',
    replace:
      'argv: ((first) => (originalArgv.forEach((a, i) => first.has(a) || first.set(a, i)), unsortedArgv.sort((a, b) => (first.get(a) ?? -1) - (first.get(b) ?? -1))))(new Map()),',
    why: "`argv` is sorted by each value's first position in the original argv, found by `indexOf` in every comparison: n² log n for a batch of n ids (10,000 ids: 0.6 s). The same first positions, read from a map built once (argv holds strings, so the map's SameValueZero finds exactly what `indexOf` found; a value not in argv is -1 as before).",
  },
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
    name: 'help-when-asked-flags',
    package: '@oclif/core',
    file: 'lib/flags.js',
    find: 'const help_1 = require("./help");',
    replace: 'const help_1 = { loadHelpClass: (...args) => require("./help").loadHelpClass(...args) };',
    why: "The flag builders require oclif's help (its renderers, ejs, the module loader, semver) only for the `--help` flag's own parse, which agentcli never declares (help is the entry's). Loaded when that parse runs instead.",
  },
  {
    name: 'help-when-asked-errors',
    package: '@oclif/core',
    file: 'lib/errors/index.js',
    find: 'var handle_1 = require("./handle");',
    replace: 'var handle_1 = { get handle() { return require("./handle").handle; } };',
    why: "`Errors.handle` (oclif's error printer, which requires its help) is never called by an agentcli tool: the session renders every error. The export stays, resolved on first read.",
  },
  {
    name: 'ux-when-asked-parser-help',
    package: '@oclif/core',
    file: 'lib/parser/help.js',
    find: 'const ux_1 = require("../ux");',
    replace: 'const ux_1 = { colorize: (...args) => require("../ux").colorize(...args) };',
    why: "The parser's help helpers use `ux.colorize` only when a missing-flag message lists flags; `ux` evaluates the spinner, its spinner table and the JSON colouriser. Loaded on that first call.",
  },
  {
    name: 'render-when-asked-cli-error',
    package: '@oclif/core',
    file: 'lib/errors/errors/cli.js',
    find: 'const clean_stack_1 = __importDefault(require("clean-stack"));\nconst indent_string_1 = __importDefault(require("indent-string"));\nconst wrap_ansi_1 = __importDefault(require("wrap-ansi"));',
    replace:
      'const clean_stack_1 = { get default() { return __importDefault(require("clean-stack")).default; } };\nconst indent_string_1 = { get default() { return __importDefault(require("indent-string")).default; } };\nconst wrap_ansi_1 = { get default() { return __importDefault(require("wrap-ansi")).default; } };',
    why: 'A `CLIError` (every parse error) needs clean-stack, indent-string and wrap-ansi only to render itself, which the session never asks of it. Each loads on first use.',
  },
  {
    name: 'render-when-asked-pretty-print',
    package: '@oclif/core',
    file: 'lib/errors/errors/pretty-print.js',
    find: 'const indent_string_1 = __importDefault(require("indent-string"));\nconst wrap_ansi_1 = __importDefault(require("wrap-ansi"));',
    replace:
      'const indent_string_1 = { get default() { return __importDefault(require("indent-string")).default; } };\nconst wrap_ansi_1 = { get default() { return __importDefault(require("wrap-ansi")).default; } };',
    why: 'Pretty-printing an error (oclif’s warn and handle) is never asked of an agentcli tool; its two formatters load on first use.',
  },
  {
    name: 'terminal-width-when-asked',
    package: '@oclif/core',
    file: 'lib/screen.js',
    find: 'exports.stdtermwidth = columns || termwidth(process.stdout);\nexports.errtermwidth = columns || termwidth(process.stderr);',
    replace:
      'Object.defineProperty(exports, "stdtermwidth", { enumerable: true, get: () => columns || termwidth(process.stdout) });\nObject.defineProperty(exports, "errtermwidth", { enumerable: true, get: () => columns || termwidth(process.stderr) });',
    why: "The parser's error class loads oclif's screen module, which measures both terminals at load: that builds `process.stdout` and `process.stderr`, which a run that writes its envelope to fd 1 never needs. Measured when read (help), with the same values.",
  },
  {
    name: 'colour-when-asked',
    package: '@oclif/core',
    file: 'lib/ux/theme.js',
    find: 'const ansis_1 = __importDefault(require("ansis"));',
    replace: 'const ansis_1 = { get default() { return __importDefault(require("ansis")).default; } };',
    why: "ansis probes the terminal's colour support when it is evaluated, which builds `process.stdout`; oclif's theme is loaded by every parse error's class but colours text only when asked (and agentcli strips colour from what it keeps). Evaluated on the first colourised string.",
  },
  {
    name: 'colour-support-when-asked',
    package: '@oclif/core',
    file: 'lib/ux/theme.js',
    find: 'const supports_color_1 = require("./supports-color");',
    replace:
      'const supports_color_1 = { supportsColor: (...args) => require("./supports-color").supportsColor(...args) };',
    why: "supports-color asks node:tty whether fds 1 and 2 are terminals when it is evaluated, and node:tty loads net and the whole stream stack (≈ 2–4 ms of every start); oclif's theme, loaded by every parse error's class, asks it only when it colours a string. Evaluated on that first call, with the same answer (it reads the same environment and descriptors).",
  },
  {
    name: 'perf-hooks-when-asked',
    package: '@oclif/core',
    file: 'lib/performance.js',
    find: 'const node_perf_hooks_1 = require("node:perf_hooks");',
    replace:
      'const node_perf_hooks_1 = { get performance() { return require("node:perf_hooks").performance; }, get PerformanceObserver() { return require("node:perf_hooks").PerformanceObserver; } };',
    why: "oclif's performance markers call node:perf_hooks only when `OCLIF_PERF`/`DEBUG` turns them on (every use sits behind `Performance.enabled`), but its module loads perf_hooks (a dozen built-in modules) with `Config`. Loaded on the first marker instead, the same two exports.",
  },
  {
    name: 'ux-when-asked-config',
    package: '@oclif/core',
    file: 'lib/config/config.js',
    find: 'const ux_1 = require("../ux");',
    replace: 'const ux_1 = { get ux() { return require("../ux").ux; } };',
    why: "`Config` uses `ux` only in a hook's `log()`; evaluating `ux` builds its spinner and reads `process.stderr.isTTY`, which creates the stderr stream (node:net and the stream stack when stderr is a pipe) on every run that loads `Config` (help, `reference`, an unknown word). Resolved on that first `log()`, the same object.",
  },
  {
    name: 'glob-when-asked',
    package: '@oclif/core',
    file: 'lib/config/plugin.js',
    find: 'const tinyglobby_1 = require("tinyglobby");',
    replace: 'const tinyglobby_1 = { glob: (...args) => require("tinyglobby").glob(...args) };',
    why: "A plugin globs its commands directory only under the `pattern` strategy; an agentcli tool's commands are `explicit`. tinyglobby and fdir (and picomatch's resolution) are evaluated on the first glob instead of with every `Config`.",
  },
  {
    name: 'rc-search-when-asked',
    package: '@oclif/core',
    file: 'lib/util/read-pjson.js',
    find: 'const lilconfig_1 = require("lilconfig");',
    replace: 'const lilconfig_1 = { lilconfig: (...args) => require("lilconfig").lilconfig(...args) };',
    why: 'lilconfig searches for an `.oclifrc` only when a package.json has no `oclif` section, which a tool (and any plugin with commands) has. Evaluated on that search instead of with every `Config`.',
  },
  {
    name: 'no-stdin-read-from-the-null-device',
    package: '@oclif/core',
    file: 'lib/parser/parse.js',
    find: 'const readStdin = async () => {\n    const { stdin, stdout } = process;',
    replace:
      'function stdinIsNullDevice() {\n    if (process.platform === "win32" || typeof Object.getOwnPropertyDescriptor(process, "stdin")?.get !== "function")\n        return false;\n    try {\n        const { fstatSync, statSync } = require("node:fs");\n        const own = fstatSync(0);\n        const nul = statSync("/dev/null");\n        return own.isCharacterDevice() && nul.isCharacterDevice() && own.rdev === nul.rdev;\n    }\n    catch {\n        return false;\n    }\n}\nconst readStdin = async () => {\n    if (stdinIsNullDevice())\n        return "";\n    const { stdin, stdout } = process;',
    why: "A command whose argument is missing fills it from stdin when stdin is not a terminal (`reference` with no path). When stdin is the null device (`< /dev/null`, a spawn's `stdio: 'ignore'`: a character device with /dev/null's `rdev`, the check `isTerminal` makes for stdout) and `process.stdin` is still Node's own lazy getter (an in-process run puts a stream of its own there), the read can only end empty: '' as the readline read resolves, without building `process.stdin`, `process.stdout` and readline (the stream stack). Whatever fstat cannot say, and Windows, read as before.",
  },
  {
    name: 'sync-json-read',
    package: '@oclif/core',
    file: 'lib/util/fs.js',
    find: "const contents = await (0, promises_1.readFile)(path, 'utf8');",
    replace: "const contents = (0, node_fs_1.readFileSync)(path, 'utf8');",
    why: "`Config.load` reads the tool's manifest and package.json through `readJson`, whose `fs/promises` read loads node:fs/promises and, with it, readline's interface (≈ 2 ms). The synchronous read returns the same text and throws the same error (same code, syscall and path) inside the same async function, so its callers see a rejected promise as before; a start reads nothing else meanwhile.",
  },
  {
    name: 'plain-help-text-as-is',
    package: '@oclif/core',
    file: 'lib/help/util.js',
    find: '    function render(t) {\n        return ejs_1.default.render(t, context);',
    replace:
      '    function render(t) {\n        if (typeof t === "string" && !t.includes(ejs_1.default.delimiter || "%"))\n            return t;\n        return ejs_1.default.render(t, context);',
    why: 'Help passes every text it prints (summaries, descriptions, flag texts, usage) through `ejs.render`, which compiles each into a function with `new Function` (no code cache keeps those) even when it holds no tag. Every ejs tag contains the delimiter (`%` unless `ejs.delimiter` says otherwise), and a text without it renders to itself; a text with it is rendered as before.',
  },
]
