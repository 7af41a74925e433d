import type { Interfaces } from '@oclif/core'
import type { CommandKind } from './command-kind.js'
import { AgentError } from './errors/agent-error.js'
import { type Catalogue, defineErrorCodes, type ErrorCode } from './errors/catalogue.js'
import type { JobContext, SubmittedJob } from './jobs/runtime.js'
import type { JobPlan, JobRecord } from './jobs/types.js'
import { addWaitFlags } from './jobs/wait-flags.js'
import {
  listQuery,
  type Page,
  type Paginated,
  type PaginateOptions,
  paginate,
  truncationMeta,
} from './list/paginate.js'
import { fetchUpstreamPage, type UpstreamPageOptions } from './list/upstream-page.js'
import type { Meta, Notice } from './output/envelope.js'
import type { FieldSelection } from './output/fields.js'
import { type Outcome, type RawOutcome, rawOutcome, type StreamOutcome, streamOutcome } from './output/outcome.js'
import { CommandServices } from './run/command-services.js'
import { awaitCall, submitCall } from './run/jobs.js'
import { ParseMemo } from './run/parse.js'
import { beforeWork, isSubmission, outcomeOf } from './run/template.js'
import { getRunState, type RunState } from './runtime/run-state.js'
import type { OutputOf, OutputSchema } from './schema/output.js'
import { readToolSettings } from './settings/package-section.js'
import { GLOBAL_FLAGS, type Globals, scanGlobals } from './universal-flags/globals.js'

export type { CommandKind } from './command-kind.js'

/**
 * What `execute()` (and a write's `apply()`) may return for a command whose output schema is `O`: the data the
 * schema describes, or for a stream an async iterable of items, or an outcome built by `raw()`/`streamOf()`, or
 * the submission of an async job. Without a schema (`O` undefined) anything goes, as before.
 */
export type CommandResult<O extends OutputSchema | undefined> = O extends OutputSchema
  ? OutputOf<O> | AsyncIterable<OutputOf<O>> | Outcome | SubmittedJob
  : unknown

// biome-ignore lint/suspicious/noExplicitAny: mirrors oclif's own FlagOutput/ArgOutput, which are Record<string, any>
type Loose = Record<string, any>
type AnyInput = Interfaces.Input<Loose, Loose, Loose>

/**
 * The base class of every agent-native command. Extend it, declare `static output`, implement `execute()`, and
 * the machine contract comes with it: the universal flags, one envelope on stdout, the error catalogue, `--fields`.
 * Pass the schema as the type argument (`extends AgentCommand<typeof listOutput>`) and the compiler checks what
 * `execute()` returns against it.
 */
export abstract class AgentCommand<O extends OutputSchema | undefined = undefined> extends CommandServices {
  /** The universal flags (`--format`, `--fields`, `--quiet`, …), from the one table; not for a tool's own flags. */
  static override baseFlags = GLOBAL_FLAGS
  /** Version of this command's output schema; bump the major on a breaking change (spec 002 §14). */
  static schemaVersion = '1.0'
  /**
   * What a call changes (see `COMMAND_KINDS`): `read` changes nothing outside the cache dir; `local` changes local
   * state (session, credentials, a job) without a confirm token; `write` goes through dry-run → confirm
   * (`WriteCommand`). Every call of a non-read command is audited.
   */
  static kind: CommandKind = 'read'
  /** Whether the command can emit raw bytes under `--format raw`. */
  static raw = false
  /** Error codes this command can raise besides the universal ones, listed in `reference`. */
  static errorCodes: readonly ErrorCode[] = []
  /** The schema of `data`. */
  static output: OutputSchema | undefined
  /** Whether `execute` returns an async iterable to print as NDJSON (spec 002 §5); `output` describes one item. */
  static stream = false
  /** Whether the command submits an async job (spec 002 §15.2). */
  static async = false
  /** A write that only adds (never deletes or overwrites) sets this to false; shown to MCP clients as a hint. */
  static destructive = true
  /** Whether repeating the same call has no further effect (reads always are); an MCP hint. */
  static idempotent = false
  /** Whether the command calls an upstream service (an MCP `openWorldHint`). */
  static openWorld = false

  private readonly parses = new ParseMemo()
  private readonly metaExtras: Partial<Meta> = {}
  private fieldSelection: FieldSelection | undefined
  // The entry's run state, read once on first use: from then on this call's state flows from here.
  private context: { state: RunState | undefined } | undefined

  /** The entry's state of this run (universal flags, catalogue, signal, grace), read once; undefined off the entry. */
  protected get runState(): RunState | undefined {
    this.context ??= { state: getRunState() }
    return this.context.state
  }

  /** The universal flags of this call. */
  protected get globals(): Globals {
    return this.runState?.globals ?? scanGlobals(this.argv)
  }

  /** The error catalogue of this tool (core codes plus its declared extensions). */
  protected get catalogue(): Catalogue {
    return this.runState?.catalogue ?? defineErrorCodes(readToolSettings(this.config).errors)
  }

  /** Aborted when the process receives SIGINT/SIGTERM; pass it to anything long-running. */
  protected get signal(): AbortSignal {
    return this.runState?.signal ?? new AbortController().signal
  }

  /** The work of the command: return the data of the envelope (or a raw outcome under `--format raw`). */
  abstract execute(): Promise<CommandResult<O>>

  /** The template every command follows; tool authors implement {@link execute} instead. */
  override async run(): Promise<Outcome> {
    const ctor = this.constructor as typeof AgentCommand
    const parsed = await this.parse(ctor as unknown as AnyInput)
    const state = this.runState
    const notice = state ? (n: Notice) => state.notices.push(n) : (n: Notice) => this.notice(n)
    this.fieldSelection = await beforeWork(ctor, this.id, parsed, this.globals, notice)
    let result: unknown = await this.execute()
    // `--wait`: the job's final envelope instead of its submission (checked against the job's result schema).
    let waited = false
    if (ctor.async && parsed.flags.wait === true && isSubmission(result)) {
      const settled = await this.awaitJob(result, parsed.flags['wait-timeout'] as number)
      if (settled.kind === 'items') return this.streamOf(settled.items)
      ;[result, waited] = [settled.data, true]
    }
    return outcomeOf(result, { command: ctor, id: this.id, fields: this.fieldSelection, meta: this.metaExtras, waited })
  }

  /** oclif's parse, memoised, with every failure turned into `E_USAGE`/`E_VALIDATION` carrying `allowed`/`got`. */
  protected override async parse<F extends Loose, B extends Loose, A extends Loose>(
    options?: Interfaces.Input<F, B, A>,
    argv: string[] = this.argv,
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const source = (options ?? this.constructor) as AnyInput
    const parser = (input: AnyInput, words: string[]) => super.parse(input, words)
    return (await this.parses.parse(source, argv, parser)) as Interfaces.ParserOutput<F, B, A>
  }

  /** Errors go to the entry, which renders every outcome through one path. */
  override async catch(error: Interfaces.CommandError): Promise<never> {
    throw error
  }

  /** Add a notice to `meta.notices`. */
  protected notice(notice: Notice): void {
    const notices = this.metaExtras.notices ?? []
    notices.push(notice)
    this.metaExtras.notices = notices
  }

  /** Add a key to `meta` (e.g. `replayed`). */
  protected setMeta(key: string, value: unknown): void {
    this.metaExtras[key] = value
  }

  /**
   * Cut a page out of a list by keyset on `sortKey` (default: the item's `id`), with a cursor bound to this call's
   * query (its arguments and flags, presentation flags aside); when items are left out, say so in `meta.truncated`
   * with a hint naming the flags that get the rest (seed 000 §6).
   */
  protected page<T>(
    all: readonly T[],
    options: {
      limit: number
      cursor?: string | undefined
      maxLimit?: number
      sortKey?: PaginateOptions<T>['sortKey']
      order?: PaginateOptions<T>['order']
    },
  ): Paginated<T>['page'] {
    const paginated = paginate({ ...options, items: all, ...this.listBinding() })
    Object.assign(this.metaExtras, truncationMeta(paginated, options))
    return paginated.page
  }

  /**
   * One page of a list whose upstream API paginates with its own cursor or page token, without fetching the whole
   * list: `fetchPage` is called exactly once, with the upstream token the verified `--cursor` carries (undefined
   * on the first page) and `--limit`. The returned `next_cursor` carries the upstream's next token inside this
   * framework's cursor: MAC'd and bound to the tool, the command and this call's query like {@link page}'s, so an
   * edited, cut or swapped one is `E_VALIDATION` (`cursor_invalid`, `cursor_query_mismatch`; longer than 4096
   * characters: `cursor_too_large`). An upstream page larger than `--limit` is cut, the next cursor naming the same
   * upstream page and how many of its items to skip; a smaller one is returned as it is, so a page may hold fewer
   * than `--limit` items and only `has_more` says the list ended. A 400 or 410 the upstream answers to a carried
   * token is `E_CONFLICT` with `details.reason: "cursor_expired"`: the agent starts again without `--cursor`.
   * Declare `UPSTREAM_ERRORS` in `errorCodes`.
   *
   * @example
   * return this.upstreamPage({
   *   limit: flags.limit,
   *   cursor: flags.cursor,
   *   maxLimit: MAX,
   *   fetchPage: async ({ token, limit }) => {
   *     const { data } = await api.get<{ items: Issue[]; next: string | null }>('/v1/issues', {
   *       query: { page_token: token, per_page: limit },
   *     })
   *     return { items: data.items, next: data.next }
   *   },
   * })
   */
  protected async upstreamPage<T>(options: UpstreamPageOptions<T>): Promise<Page<T>> {
    const page = await fetchUpstreamPage({ ...options, ...this.listBinding() })
    Object.assign(this.metaExtras, truncationMeta({ page }, options))
    return page
  }

  /** What a list's cursor is bound to: the issuer (tool and command) and this call's query. */
  private listBinding(): { issuer: string; query: Record<string, unknown> } {
    const query = listQuery(this.id ?? '', this.parses.result as never, new Set(Object.keys(GLOBAL_FLAGS)))
    return { query, issuer: `${this.config.bin}\0${this.id}` }
  }

  /**
   * Submit this call as an async job instead of doing the work inline: returns `{job_id, status, poll, result}`
   * at once, and a detached worker runs {@link AgentCommand.work} with the same arguments.
   */
  protected async submit(options: { plan?: JobPlan } = {}): Promise<SubmittedJob> {
    const { schemaVersion } = this.constructor as typeof AgentCommand
    return submitCall({ config: this.config, id: this.id!, argv: this.argv, schemaVersion, plan: options.plan })
  }

  private awaitJob(submitted: SubmittedJob, timeoutSeconds: number) {
    // The job behind a `--wait` answer: its status, result and audit stay reachable by id (`meta.job_id`).
    this.metaExtras.job_id = submitted.job_id
    return awaitCall({ config: this.config, catalogue: this.catalogue, submitted, timeoutSeconds, signal: this.signal })
  }

  /** The work of an async job, run in the worker process; its return value is the job's result. */
  async work(_ctx: JobContext): Promise<O extends OutputSchema ? OutputOf<O> : unknown> {
    throw new AgentError('E_INTERNAL', `${this.id} submits jobs but implements no work()`)
  }

  /** What the worker runs: {@link AgentCommand.work}; a write first checks the plan it confirmed. */
  async runWork(ctx: JobContext, _record: JobRecord): Promise<unknown> {
    return this.work(ctx)
  }

  /** Return items to print as NDJSON from a command that streams only sometimes (e.g. a large job result). */
  protected streamOf(items: AsyncIterable<unknown>): StreamOutcome {
    const ctor = this.constructor as typeof AgentCommand
    return streamOutcome({ items, schemaVersion: ctor.schemaVersion, fields: this.fieldSelection?.paths })
  }

  /** Return bytes for `--format raw`. */
  protected raw(body: RawOutcome['body']): RawOutcome {
    return rawOutcome(body)
  }
}

addWaitFlags(AgentCommand, GLOBAL_FLAGS)
