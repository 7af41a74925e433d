/**
 * `agentcli/builtins`: the built-in commands of every agentcli tool. A tool spreads {@link COMMANDS} (or a choice,
 * {@link builtins}) into the `COMMANDS` of its explicit command strategy: they are commands of the tool itself, on
 * the tool's single copy of agentcli, and its build bundles them with it (see docs/performance.md).
 */
import type { CommandClass } from '../runtime/base-command.js'
import Approve from './commands/approve.js'
import Changelog from './commands/changelog.js'
import Context from './commands/context.js'
import Doctor from './commands/doctor.js'
import JobCancel from './commands/job/cancel.js'
import JobList from './commands/job/list.js'
import JobResult from './commands/job/result.js'
import JobStatus from './commands/job/status.js'
import JobWorker from './commands/job/worker.js'
import Mcp from './commands/mcp.js'
import Reference from './commands/reference.js'
import Update from './commands/update.js'
import { type BuiltinsChoice, pickBuiltins } from './select.js'

export type { BuiltinsChoice } from './select.js'

/** The built-in commands by id, in the shape of oclif's explicit command strategy. */
export const COMMANDS: Readonly<Record<string, CommandClass>> = {
  approve: Approve,
  changelog: Changelog,
  context: Context,
  doctor: Doctor,
  'job:cancel': JobCancel,
  'job:list': JobList,
  'job:result': JobResult,
  'job:status': JobStatus,
  'job:worker': JobWorker,
  mcp: Mcp,
  reference: Reference,
  update: Update,
}

/**
 * The built-ins a tool ships, for the `COMMANDS` of its explicit strategy: all of them by default, or without
 * `update`, the `job` commands and/or `mcp` (`builtins({ update: false, jobs: false, mcp: false })`).
 */
export function builtins(choice: BuiltinsChoice = {}): Readonly<Record<string, CommandClass>> {
  return pickBuiltins(COMMANDS, choice)
}
