import { AgentError } from '../errors/agent-error.js'
import type { SubmittedJob } from '../jobs/runtime.js'
import type { Meta, Notice } from '../output/envelope.js'
import { type FieldSelection, projectData, requestedFields } from '../output/fields.js'
import { dataOutcome, isOutcome, type Outcome, streamOutcome } from '../output/outcome.js'
import type { Declares } from '../schema/declared-output.js'
import type { Globals } from '../universal-flags/globals.js'
import { checkedItems, checkOutput, validatingOutput } from './check-output.js'
import { callNotices, checkFormat, type Parsed, type UsageSubject } from './parse.js'

/*
 * The steps around a command's own work, in the order every call takes them, for any runner (oclif's `run()`, or
 * one that calls `execute()` without oclif): after the parse, {@link beforeWork}; after `execute()`, {@link outcomeOf}.
 */

/**
 * After a parse and before any work: the call's notices go to `notice` (before anything can fail, so an error
 * envelope carries them too), `--format raw` is checked, and `--fields` is checked against the output schema.
 */
export async function beforeWork(
  command: UsageSubject & Declares,
  id: string | undefined,
  parsed: Parsed,
  globals: Pick<Globals, 'format' | 'fields'>,
  notice: (n: Notice) => void,
): Promise<FieldSelection | undefined> {
  for (const n of callNotices(command, parsed)) notice(n)
  checkFormat(command, id, globals.format)
  // With `--wait` an async command prints the job's result, so that is what `--fields` names.
  const waits = command.async === true && parsed.flags.wait === true
  return requestedFields(globals.fields, command, { waits, notice })
}

/** The command, as the step from `execute()`'s result to an outcome sees it. */
export type ResultSubject = Declares & { schemaVersion: string; stream?: boolean }

/** What turning one call's result into its outcome needs besides the result. */
export type ResultContext = {
  command: ResultSubject
  id: string | undefined
  /** The checked `--fields` of the call, if any. */
  fields: FieldSelection | undefined
  /** What the command added to `meta` (notices, `replayed`, `truncated`). */
  meta: Partial<Meta>
  /** The data is a waited job's result, checked against the declared output alone. */
  waited?: boolean
}

/**
 * What `execute()` returned, as the outcome the entry renders: an outcome passes through; a stream command's items
 * become NDJSON (each checked under test, projected by `--fields`); data is checked under test, then projected.
 */
export async function outcomeOf(result: unknown, ctx: ResultContext): Promise<Outcome> {
  const { command, id, fields } = ctx
  if (isOutcome(result)) return result
  if (command.stream) {
    if (!isAsyncIterable(result))
      throw new AgentError('E_INTERNAL', `${id} is a stream command but execute() returned no async iterable`)
    const items = validatingOutput() ? checkedItems(command, id, result) : result
    return streamOutcome({ items, schemaVersion: command.schemaVersion, fields: fields?.paths })
  }
  if (validatingOutput()) await checkOutput(ctx.waited ? { output: command.output } : command, id, result)
  const data = fields ? projectData(result, fields) : result
  return dataOutcome(data, command.schemaVersion, ctx.meta)
}

/** Whether `execute()` returned a job's submission (what `--wait` waits for). */
export function isSubmission(value: unknown): value is SubmittedJob {
  const v = value as SubmittedJob
  return typeof v === 'object' && v !== null && typeof v.job_id === 'string' && typeof v.poll === 'string'
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value
}
