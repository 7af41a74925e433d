import { parse as parseArgv } from '@oclif/core/parser'
import { notProvided } from './fallback.js'
import { error as oclifError, exit as oclifExit } from './lite-errors.js'

// biome-ignore lint/suspicious/noExplicitAny: mirrors oclif's own loose flag and arg records
type Loose = Record<string, any>
type ParseInput = { flags?: Loose; baseFlags?: Loose; enableJsonFlag?: boolean; args?: Loose; [key: string]: unknown }
type LiteConfig = { userAgent: string; runHook(event: string, options: unknown): Promise<{ successes: unknown[] }> }
type Ctor = typeof Command & Loose

/**
 * oclif's `Command` for the fast path: the same life cycle (`_run`: init → run → catch → finally), the same
 * `parse` (oclif's own parser and validator, bundled without the rest of oclif), the same statics. What only
 * oclif's path can do (its rendering, `--json`, deprecation warnings) is not provided: reaching it hands the run
 * to oclif's path.
 */
export class Command {
  static _base = 'agentcli-fast'
  static aliases: string[] = []
  static args: Loose = {}
  static baseFlags: Loose | undefined
  static constraints: unknown
  static deprecateAliases: boolean | undefined
  static deprecationOptions: unknown
  static description: string | undefined
  static enableJsonFlag = false
  static examples: unknown
  static flags: Loose | undefined
  static hasDynamicHelp = false
  static help: string | undefined
  static hidden: boolean | undefined
  static hiddenAliases: string[] = []
  static id: string | undefined
  static plugin: unknown
  static pluginAlias: string | undefined
  static pluginName: string | undefined
  static pluginType: string | undefined
  static state: string | undefined
  static strict = true
  static summary: string | undefined
  static usage: unknown

  argv: string[]
  // biome-ignore lint/suspicious/noExplicitAny: oclif's Config, here the fast path's lite config
  config: any
  id: string | undefined
  parsed = false
  debug: (...args: unknown[]) => void = () => {}

  constructor(argv: string[], config: unknown) {
    this.argv = argv
    this.config = config
    this.id = this.ctor.id
  }

  /** oclif's `Command.run` loads a Config: only oclif's path does. */
  static async run(_argv?: string[], _opts?: unknown): Promise<unknown> {
    return notProvided('Command.run')
  }

  get ctor(): Ctor {
    return this.constructor as Ctor
  }

  async _run(): Promise<unknown> {
    let err: unknown
    let result: unknown
    try {
      this.removeEnvVar('REDIRECTED')
      await this.init()
      result = await this.run()
    } catch (error) {
      err = error
      await this.catch(error as Error)
    } finally {
      await this.finally(err as Error | undefined)
    }
    if (result && this.jsonEnabled()) notProvided('--json rendering by oclif')
    return result
  }

  async run(): Promise<unknown> {
    return notProvided('run()')
  }

  async catch(err: Error & { oclif?: { exit?: number }; exitCode?: number }): Promise<unknown> {
    process.exitCode = process.exitCode ?? err.oclif?.exit ?? err.exitCode ?? 1
    if (this.jsonEnabled()) notProvided('--json rendering by oclif')
    throw err
  }

  error(input: string | Error, options: Loose = {}): never {
    return oclifError(input, options)
  }

  exit(code = 0): never {
    return oclifExit(code)
  }

  async finally(_error: Error | undefined): Promise<unknown> {
    return undefined
  }

  async init(): Promise<unknown> {
    const g = globalThis as Loose
    g['http-call'] = g['http-call'] || {}
    g['http-call'].userAgent = (this.config as LiteConfig).userAgent
    // oclif warns about a deprecated command (or alias) here; the route table never routes one to the fast path.
    if (this.ctor.state === 'deprecated' || this.ctor.deprecateAliases) notProvided('deprecation warnings')
    return undefined
  }

  jsonEnabled(): boolean {
    if (!this.ctor?.enableJsonFlag) return false
    return notProvided('enableJsonFlag')
  }

  log(_message = '', ..._args: unknown[]): void {
    notProvided('Command.log')
  }

  logJson(_json: unknown): void {
    notProvided('Command.logJson')
  }

  logToStderr(_message = '', ..._args: unknown[]): void {
    notProvided('Command.logToStderr')
  }

  async parse(options?: ParseInput, argv: string[] = this.argv): Promise<Loose> {
    const input = options ?? (this.ctor as unknown as ParseInput)
    const combined = { ...(input.baseFlags ?? {}), ...(input.flags ?? {}) }
    if (input.enableJsonFlag) notProvided('enableJsonFlag')
    const opts = { context: this, ...input, flags: combined }
    const hooks = await (this.config as LiteConfig).runHook('preparse', { argv: [...argv], options: opts })
    if (hooks.successes.length > 0) notProvided('preparse hooks')
    this.argv = [...argv]
    const results = await parseArgv(argv, opts as never)
    this.warnIfFlagDeprecated(results.flags ?? {})
    this.parsed = true
    return results
  }

  toErrorJson(err: unknown): unknown {
    if (err instanceof Error) return { error: { ...err, message: err.message, name: err.name } }
    return { error: err }
  }

  toSuccessJson(result: unknown): unknown {
    return result
  }

  warn(input: string | Error): string | Error {
    if (!this.jsonEnabled()) notProvided('Command.warn')
    return input
  }

  protected warnIfCommandDeprecated(): void {
    if (this.ctor.state === 'deprecated' || this.ctor.deprecateAliases) notProvided('deprecation warnings')
  }

  protected warnIfFlagDeprecated(flags: Loose): void {
    const all = { ...(this.ctor.baseFlags ?? {}), ...(this.ctor.flags ?? {}) }
    for (const name of Object.keys(flags))
      if (all[name]?.deprecated || all[name]?.deprecateAliases) notProvided('flag deprecation warnings')
  }

  protected removeEnvVar(envVar: string): void {
    for (const key of (this.config as { scopedEnvVarKeys(k: string): string[] }).scopedEnvVarKeys(envVar))
      delete process.env[key]
  }
}
