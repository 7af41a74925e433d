import type { Command, Config } from '@oclif/core'
import { startAudit } from '../audit/open.js'
import type { HeldSignals } from '../boot/early-signals.js'
import { kindOf } from '../command-kind.js'
import { AgentError } from '../errors/agent-error.js'
import { toAgentError } from '../errors/normalize.js'
import { dataOutcome } from '../output/outcome.js'
import { idDepth, leadingWords, longestMatch } from '../route/match.js'
import { unknownCommand } from '../route/unknown.js'
import type { ToolEnv } from '../settings/tool-env.js'
import { onlyGlobals } from '../universal-flags/globals.js'
import { clearUpdateLeftovers } from '../update/leftovers.js'
import { invocation } from './invocation.js'
import { helpRequested, type OwnRoute, ownRoute, readPjson } from './own-commands.js'
import { openSession, type RunIo, type Session, versionOutcome } from './session.js'
import { storedHelp } from './stored-help.js'
import { oclifConfig, type ToolConfig, toolConfig } from './tool-config.js'

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
  /**
   * Run in this process, not as it: stdout, stderr and the environment are these, and the run resolves with its
   * exit code instead of exiting (tests, an embedder). One run at a time per process.
   */
  io?: RunIo
}

/**
 * The entry point of a tool's `bin/run.js`: the session, the tool's config, the route, the audit draft, the
 * command. A command of the tool's own map runs on agentcli's base without loading oclif's `Config`, and words that
 * name none of it are the router's `E_USAGE` from it too; help, a bare call, an alias, a plugin's command and a
 * tool with oclif hooks or plugins take oclif's `Config` first ({@link viaOclif}). The session (`./session.ts`)
 * owns signals, uncaught errors, settings, the renderer and the one exit: every outcome leaves as exactly one
 * envelope. Resolves with the exit code: given `io`, the run is in-process; else the process then ends with that
 * code as its event loop ends (or by `process.exit`, never resolving, when something the run left still holds
 * the loop).
 */
export async function run(root: string | URL, options: RunOptions = {}): Promise<number> {
  const session = openSession(options)
  if (options.fatal) return session.finish({ error: options.fatal })
  try {
    session.stopIfInterrupted()
    const { dir, pjson } = readPjson(root, options.bundle, options.io !== undefined)
    const config = toolConfig(dir, pjson)
    const env = session.configure(config)
    const leftovers = clearUpdateLeftovers(dir)
    if (leftovers) await leftovers
    const { globals, argv } = session
    if (argv[0] === '--version' && !globals.error)
      return await session.finish({ outcome: versionOutcome(config, globals, argv.slice(1)) })
    if (helpRequested(argv) && !globals.error) {
      // What oclif would print, stored by the build: no oclif Config or help for the common `<command> --help`.
      const stored = await storedHelp(config, argv, options.bundle)
      if (stored !== undefined) {
        await session.printStored(stored)
        return await session.end(0)
      }
    }
    // Any other help needs oclif's Config anyway. A bare call names no command.
    const route = helpRequested(argv) ? undefined : await ownRoute(config, argv, options.bundle)
    if (!route) return await viaOclif(session, env, await oclifConfig(config))
    // Words that name nothing, in a tool whose map is every command: the router's E_USAGE as oclif's path gives it
    // (a flag error first), without loading oclif's Config.
    if ('unknown' in route) {
      if (globals.error) throw globals.error
      return unknownCommand(leadingWords(argv), route.unknown, referenceHint(config.bin))
    }
    return await runOwn(session, env, config, route, options.io !== undefined)
  } catch (error) {
    return session.finish({ error })
  }
}

/** A command of the tool's own map, on agentcli's base: no oclif `Config`, no hooks (the tool declares none). */
async function runOwn(
  session: Session,
  env: ToolEnv,
  config: ToolConfig,
  route: OwnRoute,
  inProcess: boolean,
): Promise<number> {
  const { command, id, rest } = route
  // Known before any flag error is raised, so a stream command answers in NDJSON whatever went wrong.
  session.setShape({ schemaVersion: String(command.schemaVersion ?? '1.0'), stream: command.stream === true })
  // Every call of a non-read command is audited, from here on: a refusal at parse is an attempt too.
  const kind = kindOf(command)
  if (kind !== 'read') await startAudit(config, { id, kind, argv: rest })
  if (session.globals.error) throw session.globals.error
  // Bad settings are one E_CONFIG envelope before any work, never a retry loop or a crash inside the command.
  env.checkAll()
  // A signal that arrived while the tool loaded is dispatched when the event loop turns: one turn, so a held
  // signal is answered before the command starts. An in-process run has no process signals: its caller's abort
  // reaches the session at once.
  if (!inProcess) await new Promise((resolve) => setImmediate(resolve))
  session.stopIfInterrupted()
  // What oclif's plugin sets on a class it hands out: the id the command was found under.
  command.id = id
  return session.finish({ value: await command.run(rest, config) })
}

/**
 * A run that needs oclif's `Config`: help (and `tool help <command>`), a bare call (the overview), a word that
 * names none of the tool's own commands (an alias, a plugin's command, or the router's `E_USAGE`), or a tool with
 * oclif hooks or plugins. The command itself still runs on its own base, through `Config.runCommand`.
 */
async function viaOclif(session: Session, env: ToolEnv, config: Config): Promise<number> {
  const { globals } = session
  let { argv } = session
  // `tool help <command>` is `tool <command> --help` (unless the tool has its own `help` command).
  if (argv[0] === 'help' && !config.findCommand('help')) argv = [...argv.slice(1), '--help']
  // A bare call off a terminal is an agent finding its way: one envelope pointing at `reference`, not help text.
  if (onlyGlobals(session.rawArgv) && !globals.error && !session.stdoutIsTTY) {
    const { buildOverview } = await import('../describe/overview.js')
    return await session.finish({ outcome: dataOutcome(await buildOverview(config), '1.0') })
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
  if (route) {
    const command = route.command as { schemaVersion?: unknown; stream?: unknown }
    session.setShape({ schemaVersion: String(command.schemaVersion ?? '1.0'), stream: command.stream === true })
    const kind = kindOf(route.command)
    if (kind !== 'read' && !helpAsked) await startAudit(config, { id: route.id, kind, argv: route.rest })
  }
  if (globals.error) throw globals.error
  if (helpAsked) {
    await session.printText(async () => {
      // A tool's own help class wins; the default one adds the command's KIND.
      // The long texts are out of the manifest (the start path); help puts them back first.
      ;(await import('../describe/descriptions.js')).restoreHelpText(config, route?.id)
      const Help = config.pjson.oclif.helpClass
        ? await (await import('@oclif/core/help')).loadHelpClass(config)
        : (await import('./help-class.js')).AgentHelp
      // Help is the routed command's: words after it are its arguments (`list extra --help`), which oclif's help
      // would read as more of the command's id and answer with a bare Error.
      const subject = route ? [...commandId(config, route.id), '--help'] : argv
      await new Help(config, config.pjson.oclif.helpOptions).showHelp(subject)
    })
    return session.end(0)
  }
  if (!route) throw new Error('unreachable: no route')
  env.checkAll()
  const init = await config.runHook('init', { argv: route.rest, id: route.id })
  if (init.failures.length > 0) throw hookFailure(init.failures[0]!.error)
  session.stopIfInterrupted()
  const result = await config.runCommand(route.id, route.rest, route.command)
  return await session.finish({ value: result })
}

function hookFailure(error: unknown): AgentError {
  const agentError = toAgentError(error)
  if (agentError.code !== 'E_INTERNAL') return agentError
  return new AgentError('E_INTERNAL', `init hook failed: ${agentError.message}`, { cause: error })
}

type Route = { id: string; rest: string[]; command: Command.Loadable }

/** The visible command ids of the tool, as people write them (`job status`). */
export function commandNames(config: Config): string[] {
  return config.commands.filter((c) => !c.hidden).map((c) => c.id.replaceAll(':', ' '))
}

/**
 * The route of argv among every command oclif knows (aliases and plugins' commands too): the router's longest
 * match; a miss is the router's `E_USAGE` with the commands the words could have meant, never help text.
 */
function resolveCommand(config: Config, argv: readonly string[]): Route {
  const words = leadingWords(argv)
  const ids = config.commands.flatMap((c) => [c.id, ...(c.aliases ?? []), ...(c.hiddenAliases ?? [])])
  const match = longestMatch(words, (id) => config.findCommand(id), idDepth(ids))
  if (match) return { id: match.id, rest: argv.slice(match.words), command: match.found }
  return unknownCommand(words, commandNames(config), referenceHint(config.bin))
}

/** Where a call that named no command is sent: the tool's `reference`. */
function referenceHint(bin: string): string {
  return `run \`${invocation(bin)} reference\` to list commands`
}

/** A command id as the words oclif's help reads it: one word per part when the topic separator is a space. */
function commandId(config: Config, id: string): string[] {
  return config.topicSeparator === ' ' ? id.split(':') : [id]
}
