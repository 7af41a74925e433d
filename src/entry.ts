import { type Command, Config, Errors, loadHelpClass } from '@oclif/core'
import { callAudit } from './_call-audit.js'
import { getAudit, type RunState, setAudit, setRunState } from './_state.js'
import type { HeldSignals } from './boot/early-signals.js'
import { bundledPjson } from './boot/pjson.js'
import { rootPath } from './boot/root-path.js'
import { kindOf } from './command-kind.js'
import { AgentError, usageError } from './errors/agent-error.js'
import { type Catalogue, CatalogueDefinitionError, CORE_CATALOGUE, defineErrorCodes } from './errors/catalogue.js'
import { toAgentError } from './errors/normalize.js'
import { suggest } from './errors/suggest.js'
import { type Globals, normalizeArgv, onlyGlobals, scanGlobals } from './globals.js'
import { invocation } from './invocation.js'
import { readUpdateNotice } from './notices.js'
import { dataOutcome, isOutcome, type Outcome } from './outcome.js'
import { addSensitiveKeys, registerSecret } from './output/redact.js'
import { type RenderContext, renderError, renderOutcome } from './output/render.js'
import { guardStdout, withRealStdout } from './output/stdout.js'
import { toolEnv } from './settings.js'
import { readToolSettings } from './tool-settings.js'

/** Options of {@link run}. */
export type RunOptions = {
  /** Arguments without node and the script; defaults to `process.argv.slice(2)`. */
  argv?: string[]
  /** How long a command may take to wind down after SIGINT/SIGTERM before the process exits anyway. */
  interruptGraceMs?: number
  /** Set by `agentcli/boot` when the tool runs from its bundle: the bundle's path, its commands' source. */
  bundle?: string
  /** Set by `agentcli/boot`: signals received before the entry's own handlers existed. */
  held?: HeldSignals
  /** Set by `agentcli/boot`: a failure found before anything was read (an unsupported Node), answered at once. */
  fatal?: AgentError
}

const HELP_FLAGS = new Set(['--help', '-h'])

/**
 * The entry point of a tool's `bin/run.js`. It owns argv, routing, signals, uncaught errors, the renderer and
 * the exit code: every outcome leaves as exactly one envelope, and this is the only place the process exits.
 */
export async function run(root: string | URL, options: RunOptions = {}): Promise<never> {
  const startedAt = performance.now()
  guardStdout()
  const controller = new AbortController()
  const rawArgv = options.argv ?? process.argv.slice(2)
  let argv = normalizeArgv(rawArgv)
  let globals: Globals = scanGlobals(argv)
  let catalogue: Catalogue = CORE_CATALOGUE
  let schemaVersion = '1.0'
  let stream = false
  const notices: RunState['notices'] = []
  let finished = false
  let interrupted = false

  const ctx = (): RenderContext => ({ globals, catalogue, startedAt, notices, signal: controller.signal })
  const finish = async (result: { outcome?: Outcome; error?: unknown }): Promise<never> => {
    if (finished) return new Promise<never>(() => {})
    finished = true
    let code: number
    let resultCode = 'OK'
    try {
      if (result.outcome) {
        const rendering = ctx()
        code = await renderOutcome(result.outcome, rendering)
        if (rendering.failure) resultCode = rendering.failure
      } else {
        const error = interrupted ? toAgentError(controller.signal.reason) : toAgentError(result.error)
        debugStack(error)
        resultCode = error.code
        code = await renderError(error, ctx(), schemaVersion, stream)
      }
      const audit = getAudit()
      // Loaded only when a non-read command ran: read commands never pay for the audit module.
      if (audit)
        await (await import('./confirm/audit.js')).appendAudit(audit, {
          result_code: resultCode,
          exit_code: code,
          duration_ms: Math.round(performance.now() - startedAt),
        })
    } catch (renderFailure) {
      process.stderr.write(`agentcli: could not render the result: ${String(renderFailure)}\n`)
      code = 1
    }
    return exit(code)
  }

  // The first signal asks the command to stop (its `signal` aborts; a stream stops at the next item) and gives it
  // a grace period; a second one answers at once. Either way the run ends in one E_INTERRUPTED envelope, unless
  // the renderer is already writing one (then only a stuck write is cut short).
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      if (finished) return void exit(130)
      return void finish({ error: interruption(signal) })
    }
    interrupted = true
    process.stderr.write(`received ${signal}, stopping\n`)
    controller.abort(interruption(signal))
    setTimeout(() => void finish({ error: interruption(signal) }), options.interruptGraceMs ?? 2000).unref()
  }
  // Nothing has started yet: a signal before the command runs is answered without running it.
  const stopIfInterrupted = () => {
    if (interrupted) throw controller.signal.reason
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  process.on('uncaughtException', (error) => void finish({ error }))
  process.on('unhandledRejection', (error) => void finish({ error }))
  options.held?.release()
  const held = options.held?.first()
  if (held) onSignal(held)
  if (options.fatal) return finish({ error: options.fatal })

  try {
    stopIfInterrupted()
    const rootDir = rootPath(root)
    const config = await Config.load({
      root: rootDir,
      userPlugins: false,
      ...(options.bundle ? { pjson: bundledPjson(rootDir, options.bundle) as never } : {}),
    })
    stopIfInterrupted()
    const env = toolEnv(config.bin)
    // Before anything is read from or written to them (the update notice, an audit line): oclif took these as given.
    for (const dir of ['CONFIG_DIR', 'DATA_DIR', 'CACHE_DIR'] as const) env.get(dir)
    const settings = readToolSettings(config)
    catalogue = defineErrorCodes(settings.errors)
    if (Array.isArray(settings.redact_keys)) addSensitiveKeys(settings.redact_keys as string[])
    // An injected token is a secret this process holds, whether or not the command ever reads it.
    registerSecret(env.raw('TOKEN'))
    const notice = readUpdateNotice(config.cacheDir, config.version)
    if (notice) notices.push(notice)
    const envName = `${env.prefix}FORMAT`
    globals = scanGlobals(argv, { name: envName, value: env.raw('FORMAT') })
    setRunState({ globals, catalogue, signal: controller.signal, notices, bin: config.bin })
    if (argv[0] === '--version' && !globals.error) return await finish({ outcome: versionOutcome(config, globals) })
    // `tool help <command>` is `tool <command> --help` (unless the tool has its own `help` command).
    if (argv[0] === 'help' && !config.findCommand('help')) argv = [...argv.slice(1), '--help']
    // A bare call off a terminal is an agent finding its way: one envelope pointing at `reference`, not help text.
    if (onlyGlobals(rawArgv) && !globals.error && !process.stdout.isTTY) {
      const { buildOverview } = await import('./describe/overview.js')
      return await finish({ outcome: dataOutcome(await buildOverview(config), '1.0') })
    }
    const helpAsked = argv.length === 0 || helpRequested(argv)
    const commandWords = argv.filter((a) => !a.startsWith('-'))
    let route: Route | undefined
    try {
      route = (helpAsked || globals.error) && commandWords.length === 0 ? undefined : resolveCommand(config, argv)
    } catch (error) {
      // Help on a topic (`tool job --help`) is help, exit 0; help on a word that names nothing stays E_USAGE.
      if (globals.error || !helpAsked || !config.findTopic(leadingWords(argv).join(':'))) throw globals.error ?? error
    }
    // Known before any flag error is raised, so a stream command answers in NDJSON whatever went wrong.
    if (route) {
      schemaVersion = String((route.command as { schemaVersion?: unknown }).schemaVersion ?? '1.0')
      stream = (route.command as { stream?: unknown }).stream === true
      // Every call of a non-read command is audited, from here on: a refusal at parse is an attempt too.
      const kind = kindOf(route.command)
      if (kind !== 'read' && !helpAsked) {
        const draft = callAudit({ dataDir: config.dataDir, id: route.id, kind, argv: route.rest })
        // On a fleet the store's audit log gets every non-read call too, not only the writes.
        const shared = (await import('./fleet/audit-sink.js')).sharedAuditSink(config)
        if (shared) draft.shared = shared
        setAudit(draft)
      }
    }
    if (globals.error) throw globals.error
    if (helpAsked) {
      await withRealStdout(async () => {
        // A tool's own help class wins; the default one adds the command's KIND.
        // The long texts are out of the manifest (the start path); help puts them back first.
        ;(await import('./describe/descriptions.js')).restoreHelpText(config, route?.id)
        const Help = config.pjson.oclif.helpClass ? await loadHelpClass(config) : (await import('./_help.js')).AgentHelp
        await new Help(config, config.pjson.oclif.helpOptions).showHelp(argv)
      })
      return exit(0)
    }
    if (!route) throw new Error('unreachable: no route')
    // Bad settings are one E_CONFIG envelope before any work, never a retry loop or a crash inside the command.
    env.checkAll()
    argv = route.rest
    const init = await config.runHook('init', { argv: route.rest, id: route.id })
    if (init.failures.length > 0) throw hookFailure(init.failures[0]!.error)
    stopIfInterrupted()
    const result = await config.runCommand(route.id, route.rest, route.command)
    return await finish({ outcome: isOutcome(result) ? result : dataOutcome(result ?? null, schemaVersion) })
  } catch (error) {
    // oclif's `this.exit(0)` throws; a clean exit is a success with no data, any other is a tool bug.
    if (error instanceof Errors.ExitError) {
      if (error.oclif.exit === 0) return finish({ outcome: dataOutcome(null, schemaVersion) })
      return finish({
        error: new AgentError('E_INTERNAL', `command exited with ${error.oclif.exit}; throw an AgentError instead`, {
          details: { exit_code: error.oclif.exit },
        }),
      })
    }
    if (error instanceof CatalogueDefinitionError)
      return finish({ error: new AgentError('E_INTERNAL', error.message, { cause: error }) })
    return finish({ error })
  }
}

function interruption(signal: NodeJS.Signals): AgentError {
  return new AgentError('E_INTERRUPTED', `interrupted by ${signal}`, { details: { signal } })
}

function exit(code: number): never {
  process.exit(code)
}

function debugStack(error: AgentError): void {
  if (!process.env.DEBUG) return
  const cause = error.cause instanceof Error ? error.cause : error
  process.stderr.write(`${cause.stack ?? String(cause)}\n`)
}

function helpRequested(argv: readonly string[]): boolean {
  for (const token of argv) {
    if (token === '--') return false
    if (HELP_FLAGS.has(token)) return true
  }
  return false
}

function hookFailure(error: unknown): AgentError {
  const agentError = toAgentError(error)
  if (agentError.code !== 'E_INTERNAL') return agentError
  return new AgentError('E_INTERNAL', `init hook failed: ${agentError.message}`, { cause: error })
}

function versionOutcome(config: Config, globals: Globals): Outcome {
  const data = { tool: config.bin, version: config.version }
  if (globals.format === 'text') return { ...dataOutcome(`${config.bin} ${config.version}`, '1.0') }
  return dataOutcome(data, '1.0')
}

type Route = { id: string; rest: string[]; command: Command.Loadable }

/** The visible command ids of the tool, as people write them (`job status`). */
export function commandNames(config: Config): string[] {
  return config.commands.filter((c) => !c.hidden).map((c) => c.id.replaceAll(':', ' '))
}

/**
 * Find the longest run of leading words that names a command. A topic without a command, or a word that names
 * nothing, is `E_USAGE` with the commands it could have meant, never help text and never exit 0.
 */
function resolveCommand(config: Config, argv: readonly string[]): Route {
  const words = leadingWords(argv)
  for (let n = words.length; n > 0; n--) {
    const id = words.slice(0, n).join(':')
    const command = config.findCommand(id)
    if (command) return { id, rest: argv.slice(n), command }
  }
  const names = commandNames(config)
  if (words.length === 0) {
    throw usageError('No command given', {
      allowed: names.sort(),
      hint: `run \`${invocation(config.bin)} reference\` to list commands`,
    })
  }
  for (let n = words.length; n > 0; n--) {
    const topic = words.slice(0, n).join(' ')
    const under = names.filter((name) => name.startsWith(`${topic} `)).sort()
    if (under.length > 0) {
      const got = words.slice(0, n + 1).join(' ')
      const message = n === words.length ? `${topic} is a topic; name one of its commands` : `Unknown command: ${got}`
      return throwUsage(message, got, under, suggest(got, under))
    }
  }
  const got = words.join(' ')
  const suggestions = [...new Set([...suggest(got, names), ...suggest(words[0]!, names)])].slice(0, 3)
  return throwUsage(`Unknown command: ${got}`, got, names.sort(), suggestions)
}

/** The words before the first flag: the command or topic named. */
function leadingWords(argv: readonly string[]): string[] {
  const words: string[] = []
  for (const token of argv) {
    if (token.startsWith('-')) break
    words.push(token)
  }
  return words
}

function throwUsage(message: string, got: string, allowed: string[], suggestions: string[]): never {
  const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `'${s}'`).join(' or ')}?` : ''
  throw usageError(`${message}.${hint}`, { got, allowed, suggestions })
}
