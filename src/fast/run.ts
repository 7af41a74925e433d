import { startAudit } from '../audit/open.js'
import { type HeldSignals, holdSignals } from '../boot/early-signals.js'
import { bundledPjson } from '../boot/pjson.js'
import { kindOf } from '../command-kind.js'
import { leadingWords, longestMatch } from '../route/match.js'
import type { RunOptions } from '../runtime/entry.js'
import { openSession, type Session, versionOutcome } from '../runtime/session.js'
import { idKind } from './boot.js'
import { FastFallback, fallbackReached, noWayBackWhen, pastNoWayBack } from './fallback.js'
import { liteConfig } from './lite-config.js'

/** A command class as the fast bundle holds it: oclif's shape, over the lite `Command`. */
type FastCommand = (new (
  argv: string[],
  config: unknown,
) => { _run(): Promise<unknown> }) & {
  id?: string
  plugin?: unknown
  schemaVersion?: unknown
  stream?: unknown
}

/** What `agentcli/boot` hands the fast bundle. */
export type FastOptions = Pick<RunOptions, 'argv' | 'interruptGraceMs' | 'held'> & {
  /** The tool's main bundle: the pjson is the one oclif's path sees when it runs from it. */
  bundle: string
  /** The route table's text (`dist/fast-routes.json`, see `idKind`). */
  table: string
  /** The fast routes' classes, each a getter that evaluates its module on first read. */
  commands: Record<string, FastCommand>
}

/**
 * What {@link runFast} resolves to when it hands the run to oclif's path: nothing was printed and the session's
 * hold on the process is undone, except that signals are held again (for oclif's path's session to answer).
 */
export type HandOver = { held: HeldSignals }

/**
 * Serve one fast route without oclif: the shared session, a lite config, the command's own class on the lite
 * `Command` (its parse is oclif's parser). Resolves only to hand the run over ({@link HandOver}); otherwise the
 * session's finish exits.
 */
export async function runFast(root: string, options: FastOptions): Promise<HandOver> {
  const session = openSession(options)
  try {
    session.stopIfInterrupted()
    const config = liteConfig(root, bundledPjson(root, options.bundle) as never)
    const env = session.configure(config)
    const { globals, argv } = session
    if (argv[0] === '--version' && !globals.error)
      return await session.finish({ outcome: versionOutcome(config, globals) })
    const route = fastRoute(options.table, argv)
    if (!route) return handOver(session)
    const Command = options.commands[route.id]
    if (!Command) return handOver(session)
    session.setShape({ schemaVersion: String(Command.schemaVersion ?? '1.0'), stream: Command.stream === true })
    // Every call of a non-read command is audited from here on, as on oclif's path: a refusal at parse too.
    const kind = kindOf(Command)
    if (kind !== 'read') {
      if (await onFleet(config as never)) return handOver(session)
      await startAudit(config, { id: route.id, kind, argv: route.rest })
    }
    if (globals.error) throw globals.error
    env.checkAll()
    // A signal that arrived while the bundle loaded is only dispatched when the event loop turns; oclif's path
    // turns it in Config.load. One turn here, so a held signal is answered before the command runs.
    await new Promise((resolve) => setImmediate(resolve))
    session.stopIfInterrupted()
    // What oclif's plugin sets on a class it hands out; nothing on the fast path reads the plugin.
    Command.id = route.id
    const command = new Command(route.rest, config)
    // Up to the token's consumption a write has changed nothing a second run would see (a preview, a refusal, a
    // replay, a verified token not yet spent): it may still be handed over. Past it, the change may be under way,
    // so reaching something unprovided fails closed (E_INTERNAL) instead of running the call twice.
    if (kind === 'write') noWayBackWhen(() => tokenSpent(command))
    const value = await command._run()
    // A fallback the command swallowed before its token was spent must not send a finished write round again:
    // past that point the outcome stands as the command produced it.
    if (fallbackReached() && !pastNoWayBack()) return handOver(session)
    return await session.finish({ value })
  } catch (error) {
    const fellBack = error instanceof FastFallback || fallbackReached() !== undefined
    if (fellBack && !session.interrupted() && !pastNoWayBack()) return handOver(session)
    return session.finish({ error })
  }
}

/** The route of the normalised argv: the longest leading words that name a command, if it is a fast route. */
function fastRoute(table: string, argv: readonly string[]): { id: string; rest: string[] } | undefined {
  for (const token of argv) if (token === '--' || token === '--help' || token === '-h') return undefined
  const match = longestMatch(leadingWords(argv), (id) => idKind(table, id))
  return match?.found === 'route' ? { id: match.id, rest: argv.slice(match.words) } : undefined
}

/** Whether a write's token was consumed: `WriteCommand` records what it confirmed right after consuming it. */
function tokenSpent(command: object): boolean {
  return (command as { writeState?: { confirmed?: unknown } }).writeState?.confirmed !== undefined
}

/**
 * Whether the tool keeps its write state in a shared store (`<BIN>_STATE_URL` / `agentcli.state.url`), or names
 * one that cannot be used: the store's drivers are not in the fast bundle, so oclif's path serves such a call.
 */
async function onFleet(config: never): Promise<boolean> {
  try {
    return (await import('../fleet/location.js')).stateLocation(config).kind !== 'file'
  } catch {
    return true
  }
}

function handOver(session: Session): HandOver {
  const held = holdSignals()
  session.close()
  process.exitCode = undefined
  return { held }
}
