import type { Interfaces } from '@oclif/core'
import { parse as parseArgv } from '@oclif/core/parser'
import { writeStderr } from '../output/stderr.js'
import type { ToolConfig } from './tool-config.js'

// biome-ignore lint/suspicious/noExplicitAny: mirrors oclif's own FlagOutput/ArgOutput, which are Record<string, any>
type Loose = Record<string, any>
type Deprecation = { to?: string; message?: string; version?: string | number }
type Ctor = typeof BaseCommand & Loose

/** A command class of a tool's map (`COMMANDS`): a class on agentcli's base. */
export type CommandClass = typeof BaseCommand

/** What `this.exit(code)` throws; the session turns it into an envelope (0: a success with no data). */
export class CommandExit extends Error {
  readonly code = 'EEXIT'
  readonly oclif: { exit: number }

  constructor(exitCode: number) {
    super(`EEXIT: ${exitCode}`)
    this.oclif = { exit: exitCode }
  }
}

/**
 * agentcli's own command base: what oclif's `Config.runCommand` calls (static `run`, then `_run`: init → run →
 * catch → finally) and what its manifest and help read (the statics), with oclif's parser doing the parse. It is
 * not oclif's `Command`: no config is loaded here (the entry hands one in), nothing renders (the session does),
 * and `--json` is agentcli's.
 */
export abstract class BaseCommand {
  static _base = 'agentcli'
  /** Other ids the command answers to (oclif's `aliases`), e.g. `['ls']`. */
  static aliases: string[] = []
  /** The positional arguments, built with `Args` (oclif's `args`). */
  static args: Loose = {}
  /** Flags every command of a base class takes: the universal flags (and a write's); not for a tool's own. */
  static baseFlags: Loose
  /** Whether calling the command by an alias warns that the alias is deprecated. */
  static deprecateAliases?: boolean
  /** How the command is deprecated (`state: 'deprecated'`): what replaces it (`to`), the version removing it. */
  static deprecationOptions?: Deprecation
  /** What the command does, in full: `--help` and `reference` show it. */
  static description: string | undefined
  /** Never oclif's `--json`: the universal `--json` is agentcli's own. */
  static enableJsonFlag = false
  /** Example calls (`'<%= config.bin %> <%= command.id %> --limit 5'`), shown in `--help`, `reference` and SKILL.md. */
  static examples: unknown
  /** The command's own flags, built with `Flags`. */
  static flags: Loose
  /** Whether help is computed at run time (oclif's `hasDynamicHelp`); agentcli's commands keep it false. */
  static hasDynamicHelp = false
  /** Whether the command is left out of help and listings (it still runs). */
  static hidden: boolean | undefined
  /** Aliases that work but are listed nowhere. */
  static hiddenAliases: string[] = []
  /** The command's id (`job:status`): its key in the tool's `COMMANDS` map, set by the framework, not the author. */
  static id: string
  /** The oclif plugin the command came from; set by oclif when it loads the command. */
  static plugin: unknown
  /** The alias of that plugin; set by oclif. */
  static pluginAlias: string | undefined
  /** The name of that plugin; set by oclif. */
  static pluginName: string | undefined
  /** The type of that plugin (`core`, `user`, `link`); set by oclif. */
  static pluginType: string | undefined
  /** A state shown in help (`beta`, `deprecated`). */
  static state?: string
  /** Whether arguments beyond those declared are refused (`E_USAGE`); true by default. */
  static strict = true
  /** One line saying what the command does: the first line of `--help`, and `reference`'s summary. */
  static summary: string | undefined
  /** Usage lines shown in `--help` instead of the generated one. */
  static usage: unknown

  /** The arguments of this call, the command's id words removed. */
  argv: string[]
  /** The tool's config: its name, version, directories and `<BIN>_<KEY>` readers. */
  config: ToolConfig
  /** The command's id (`job:status`). */
  id: string | undefined

  constructor(argv: string[], config: ToolConfig) {
    this.argv = argv
    this.config = config
    this.id = (this.constructor as Ctor).id
  }

  /** What oclif's `Config.runCommand` (and the entry) calls: a new instance, run once. */
  static async run(argv: string[], config: ToolConfig): Promise<unknown> {
    if (!config) throw new TypeError('a command runs with the config its entry loaded: run the tool, not the class')
    const Concrete = this as unknown as new (argv: string[], config: ToolConfig) => BaseCommand
    return new Concrete(argv, config)._run()
  }

  /** One run: {@link init}, {@link run}, {@link catch} on failure, {@link finally} always. */
  async _run(): Promise<unknown> {
    let failure: Error | undefined
    try {
      await this.init()
      return await this.run()
    } catch (error) {
      failure = error as Error
      return await this.catch(error as Error)
    } finally {
      await this.finally(failure)
    }
  }

  /** The work of the command. */
  abstract run(): Promise<unknown>

  /** Before {@link run}: a deprecated command says so on stderr. */
  async init(): Promise<unknown> {
    const ctor = this.constructor as Ctor
    if (ctor.state === 'deprecated')
      this.warn(deprecationWarning('command', commandName(ctor.id ?? '', this.config), ctor.deprecationOptions ?? {}))
    return undefined
  }

  /** A failure of {@link run}: rethrown for the entry, which renders every outcome. */
  async catch(error: Error): Promise<unknown> {
    throw error
  }

  /** After {@link run}, whatever happened. */
  async finally(_error: Error | undefined): Promise<unknown> {
    return undefined
  }

  /** Parse `argv` against the command's flags and args with oclif's parser; deprecated flags warn on stderr. */
  protected async parse<F extends Loose, B extends Loose, A extends Loose>(
    options?: Interfaces.Input<F, B, A>,
    argv: string[] = this.argv,
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const input = (options ?? this.constructor) as Interfaces.Input<F, B, A>
    const flags = { ...(input.baseFlags ?? {}), ...(input.flags ?? {}) }
    this.argv = [...argv]
    const results = await parseArgv(argv, { context: this, ...input, flags } as never)
    this.warnIfFlagDeprecated(results.flags ?? {})
    return results as Interfaces.ParserOutput<F, B, A>
  }

  /** End the command with `code`; 0 is a success with no data, anything else a tool bug the envelope reports. */
  exit(code = 0): never {
    throw new CommandExit(code)
  }

  /** Fail the command with `input`: an `E_INTERNAL` envelope unless it is an `AgentError` (throw one instead). */
  error(input: string | Error): never {
    throw typeof input === 'string' ? new Error(input) : input
  }

  /** A line for people (stderr: stdout carries only the envelope). */
  log(message = '', ...args: unknown[]): void {
    writeStderr(`${[message, ...args].join(' ')}\n`)
  }

  /** A warning for people, on stderr. */
  warn(input: string | Error): string | Error {
    writeStderr(`warning: ${input instanceof Error ? input.message : input}\n`)
    return input
  }

  private warnIfFlagDeprecated(flags: Loose): void {
    const ctor = this.constructor as Ctor
    const all: Loose = { ...(ctor.baseFlags ?? {}), ...(ctor.flags ?? {}) }
    for (const name of Object.keys(flags)) {
      const def = all[name]
      if (def?.deprecated) this.warn(deprecationWarning('flag', name, def.deprecated))
      if (!def?.deprecateAliases) continue
      const aliases = [...new Set<string>([...(def.aliases ?? []), ...(def.charAliases ?? [])])]
      for (const alias of aliases.map((a) => (a.length === 1 ? `-${a}` : `--${a}`)))
        if (this.argv.includes(alias))
          this.warn(deprecationWarning('flag', alias, { to: `--${def.name}${def.char ? ` | -${def.char}` : ''}` }))
    }
  }
}

/** The command's id as people type it: with the tool's topic separator. */
function commandName(id: string, config: ToolConfig): string {
  const separator = (config.pjson.oclif?.topicSeparator as string | undefined) ?? ':'
  return id.replaceAll(':', separator)
}

/** The words oclif uses for a deprecated command or flag, so a warning reads the same whoever runs the command. */
function deprecationWarning(kind: 'command' | 'flag', subject: string, options: Deprecation | true): string {
  const message = `The "${subject}" ${kind} has been deprecated`
  if (options === true) return `${message}.`
  if (options.message) return options.message
  const removal = options.version ? ` and will be removed in version ${options.version}` : ''
  return `${message}${removal}${options.to ? `. Use "${options.to}" instead.` : '.'}`
}
