import type { ApprovalStore } from './approvals/store.js'
import { checkAuditLog, startAudit } from './audit/open.js'
import { noteAudit } from './audit/pending.js'
import { AgentCommand, type CommandResult } from './command.js'
import type { BatchData } from './confirm/batch.js'
import type { IdempotencyLedger } from './confirm/idempotency.js'
import type { TokenLedger } from './confirm/ledger.js'
import type { BatchItem } from './confirm/preview.js'
import type { KeyRing, SecretSource } from './confirm/secret.js'
import type { Binding } from './confirm/token.js'
import { AgentError } from './errors/agent-error.js'
import type { Interruption } from './errors/interrupted.js'
import type { SharedPrimitives } from './fleet/ledgers.js'
import type { JobContext } from './jobs/runtime.js'
import type { JobRecord } from './jobs/types.js'
import { addWaitFlags } from './jobs/wait-flags.js'
import type { EffectivePolicy } from './policy/policy.js'
import { invocation, shellQuote } from './runtime/invocation.js'
import type { OutputSchema } from './schema/output.js'
import { toolEnv } from './settings/tool-env.js'
import { GLOBAL_FLAGS } from './universal-flags/globals.js'
import { batchData } from './write/batch.js'
import { checkBatchSize, DEFAULT_MAX_BATCH_ITEMS } from './write/batch-limit.js'
import { newWriteState, type WriteCall, type WriteSteps } from './write/call.js'
import { WRITE_FLAGS, writeRequest } from './write/flags.js'
import { writeFlow } from './write/flow.js'
import type { GateCall } from './write/gate.js'
import { confirmedPlan } from './write/job-check.js'
import { mapPaced } from './write/pace.js'
import { type Plan, rejectedItems, type WriteJobContext } from './write/plan.js'
import { defaultPrincipal } from './write/principal.js'
import { type Risk, UNDECLARED_RISK } from './write/risk.js'

export { idempotencyFlags, WRITE_FLAGS } from './write/flags.js'
export type { Plan, WriteJobContext } from './write/plan.js'

/**
 * A command that changes state. The base class owns the flow of spec 002 §7: no write without a valid,
 * unexpired, single-use token bound to exactly what was previewed. Implement `plan()` (reads only) and
 * `apply()` (does exactly the planned change). `S` is the state `plan()` hands `apply()`; `O` the output schema
 * `apply()`'s result is checked against (`WriteCommand<State, typeof created>`). The check order is in
 * docs/contract.md ("What a token binds"); the flow itself is in `src/write/`.
 */
export abstract class WriteCommand<S = unknown, O extends OutputSchema | undefined = undefined> extends AgentCommand {
  static override kind = 'write' as const
  /** The universal flags and a write's own (`--dry-run`, `--confirm`, …); not for a tool's own flags. */
  static override baseFlags = { ...GLOBAL_FLAGS, ...WRITE_FLAGS }
  /** How long a confirm token stays valid. */
  static confirmTtlSeconds = 600
  /**
   * `required` (the default): a single-use ledger that cannot be read or written is `E_IO` and nothing is
   * applied. `best_effort` is the documented degraded mode: warn on stderr and apply without single-use.
   */
  static singleUse: 'required' | 'best_effort' = 'required'
  /**
   * The most items one call may name (the values of its variadic arguments). More is `E_VALIDATION` with
   * `details.allowed: {max_items}` and `details.got`, before anything is read or written.
   */
  static maxBatchItems = DEFAULT_MAX_BATCH_ITEMS
  /**
   * What a call does to the world (`{action, blast_radius, reversible, undo, cost}`, see `RISK_ACTIONS`): shown in
   * `reference`, `--help`, SKILL.md, MCP annotations and the dry-run preview, and judged by the policy gate.
   * Undeclared, a write is taken at its strictest (`update` of a `set`, not reversible).
   */
  static risk: Risk | undefined

  private readonly writeState = newWriteState()

  /** Read the current state and describe the change. Must have no side effect. */
  abstract plan(): Promise<Plan<S>>
  /** Perform exactly the planned change and return the data of the envelope. */
  abstract apply(plan: Plan<S>): Promise<CommandResult<O>>

  /**
   * Who is acting: bound into the token, the idempotency scope and the audit record, so that a token minted for
   * one account, permission context or profile fails for another. The default is the credentials' account (the
   * injected `<BIN>_ACCOUNT`/`<BIN>_TOKEN`, else the stored login) with the scopes its login recorded, the
   * profile and the OS user. Override it to add what only the tool knows (a role, a tenant); keep `account`.
   */
  protected async principal(): Promise<Record<string, unknown>> {
    return defaultPrincipal(await this.credentials(), toolEnv(this.config.bin))
  }

  /** The tool's identity in a token: the bin name and the package name, stable across versions. */
  protected toolIdentity(): string {
    return `${this.config.bin}\0${this.config.pjson.name}`
  }

  /**
   * Where the confirm secret comes from: the injected key ring (`<BIN>_CONFIRM_SECRET`, or a file named by
   * `<BIN>_CONFIRM_SECRET_FILE`; see docs/fleet.md) if set, else the config dir's file.
   */
  protected async secretSource(): Promise<SecretSource> {
    const env = toolEnv(this.config.bin)
    const { injectedSecretSource } = await import('./fleet/key-ring.js')
    const injected = injectedSecretSource(env.prefix)
    if (injected) return injected
    const { fileSecretSource } = await import('./confirm/secret.js')
    return fileSecretSource(this.config.configDir)
  }

  /** The keys of {@link WriteCommand.secretSource}: a source without a ring is one key with no id. */
  private async keyRing(): Promise<KeyRing> {
    const source = await this.secretSource()
    if (source.ring) return source.ring()
    const key = await source.get()
    return { current: { id: null, key }, keys: new Map([[null, key]]) }
  }

  /** The consumed-token ledger: the fleet's store when a state URL is set, else this machine's files. */
  protected async tokenLedger(): Promise<TokenLedger> {
    const fleet = await this.fleetPrimitives()
    if (fleet) return (await import('./fleet/ledgers.js')).sharedTokenLedger(fleet)
    const { fileTokenLedger } = await import('./confirm/ledger.js')
    const ctor = this.constructor as typeof WriteCommand
    return fileTokenLedger(
      this.config.dataDir,
      ctor.singleUse === 'best_effort' ? { degraded: (m) => this.warn(m) } : {},
    )
  }

  /** The idempotency ledger: the fleet's store when a state URL is set, else this machine's files. */
  protected async idempotencyLedger(): Promise<IdempotencyLedger> {
    const fleet = await this.fleetPrimitives()
    if (fleet) {
      const [{ sharedIdempotencyLedger }, { pendingWaitMsOf }] = await Promise.all([
        import('./fleet/ledgers.js'),
        import('./fleet/location.js'),
      ])
      return sharedIdempotencyLedger(fleet, { pendingWaitMs: pendingWaitMsOf(this.config) })
    }
    const { fileIdempotencyLedger } = await import('./confirm/idempotency.js')
    return fileIdempotencyLedger(this.config.dataDir)
  }

  /** The shared store's primitives, or undefined for machine-local files (no driver is loaded then). */
  private async fleetPrimitives(): Promise<SharedPrimitives | undefined> {
    return (await this.fleetBackend())?.primitives
  }

  /**
   * Turn per-item outcomes into batch data, with the items that landed in an earlier run of the same batch
   * (same idempotency key) reported `already_applied`; any failed item fails the envelope (docs/contract.md,
   * "Batches").
   */
  protected batchResult(items: BatchItem[]): BatchData {
    const flags = (this.constructor as typeof WriteCommand).flags ?? {}
    return batchData(items, this.writeState, this.catalogue, {
      bin: this.config.bin,
      id: this.id!,
      argv: this.argv,
      keyFlag: Object.hasOwn(flags, 'idempotency-key'),
    })
  }

  /**
   * `fn` over a batch's items, yielding to the event loop every few milliseconds so that a signal is handled; a
   * signal stops it with `E_INTERRUPTED`, marked as preceding any change (so do the writing after it). Use it
   * for any loop over a batch in `plan()` and `apply()`.
   */
  protected mapItems<T, R>(items: Iterable<T>, fn: (item: T, index: number) => R): Promise<R[]> {
    return mapPaced(items, fn, this.signal)
  }

  /** The rejected items of a plan, as batch items. */
  protected rejectedItems(plan: Plan<S>): BatchItem[] {
    return rejectedItems(plan)
  }

  /** An async write hands its worker the targets and versions that were confirmed. */
  protected override async submit(): ReturnType<AgentCommand['submit']> {
    const confirmed = this.writeState.confirmed
    if (!confirmed)
      throw new AgentError(
        'E_INTERNAL',
        `${this.id} submitted a job outside a confirmed write (call submit() from apply())`,
      )
    return super.submit({ plan: confirmed })
  }

  /**
   * In the worker: recompute the plan and apply it only if its targets and versions are exactly those that
   * were confirmed (a file swapped after the confirm is `E_CONFLICT`, nothing applied), under the same policy, and
   * judged by it again: a change it holds needs its approvals, verified again here; `work` gets that plan.
   */
  override async runWork(ctx: JobContext, record: JobRecord): Promise<unknown> {
    const policy = (await import('./policy/load.js')).loadPolicy(
      this.config.configDir,
      this.config.pjson as never,
      this.config.bin,
    )
    const origin = { bin: this.config.bin, id: this.id!, policy: policy?.digest }
    const gate = policy
      ? async () => {
          const { request, items, principal } = await this.writeCall()
          const binding = { tool: this.toolIdentity(), command: this.id!, args: request.bound, policy: policy.digest }
          return { gate: this.gateCall(policy, principal, items), binding }
        }
      : undefined
    const plan = await confirmedPlan(record, () => this.plan(), origin, gate)
    return this.work({ ...ctx, plan } as WriteJobContext<S>)
  }

  /** The call as parsed: what it asks for, how many items it names, who is acting. */
  private async writeCall() {
    const ctor = this.constructor as typeof WriteCommand
    const { flags, args } = await this.parse(ctor as never)
    const request = writeRequest(flags as Record<string, unknown>, args as Record<string, unknown>)
    const items = checkBatchSize(this.id!, ctor.args ?? {}, args as Record<string, unknown>, ctor.maxBatchItems)
    return { request, items, principal: await this.principal() }
  }

  /** The write flow; tools implement `plan` and `apply` instead. */
  async execute(): Promise<unknown> {
    const ctor = this.constructor as typeof WriteCommand
    const { request, items, principal } = await this.writeCall()
    const { dryRun, token, key, bound } = request
    this.writeState.idempotencyKey = key
    const mode = dryRun ? 'dry_run' : token ? 'confirm' : 'refused'
    checkAuditLog(await startAudit(this.config, { id: this.id!, argv: this.argv, principal, mode }))
    const policy = (await import('./policy/load.js')).loadPolicy(
      this.config.configDir,
      this.config.pjson as never,
      this.config.bin,
    )
    const binding: Binding = {
      tool: this.toolIdentity(),
      command: this.id!,
      args: bound,
      principal,
      ...(policy ? { policy: policy.digest } : {}),
    }
    const scope = key ? (await import('./confirm/idempotency.js')).idempotencyScope(binding.tool, principal) : ''
    const call: WriteCall = { binding, audit: noteAudit, idem: key ? { key, scope } : undefined }
    if (policy) call.gate = this.gateCall(policy, principal, items)
    const origin = { bin: this.config.bin, argv: this.argv, ttlSeconds: ctor.confirmTtlSeconds }
    return writeFlow(this.steps(), request, call, origin)
  }

  /** The policy gate of this call: the facts it is judged on, where approvals are filed, what to run again. */
  private gateCall(policy: EffectivePolicy, principal: Record<string, unknown>, items: number): GateCall {
    const text = (v: unknown) => (typeof v === 'string' ? v : null)
    const ctor = this.constructor as typeof WriteCommand
    const words = [...this.id!.split(':'), ...this.argv].map(shellQuote)
    const bin = this.config.bin
    return {
      policy,
      facts: {
        command: this.id!.replaceAll(':', ' '),
        kind: 'write',
        risk: ctor.risk ?? UNDECLARED_RISK,
        targets: items,
        profile: text(principal.profile),
        account: text(principal.account),
      },
      bin,
      approvals: () => this.approvalStore(),
      requester: {
        account: text(principal.account),
        os_user: text(principal.os_user),
        subject: text((principal.subject as { sub?: unknown } | undefined)?.sub),
      },
      // Read only by a change held for approval: finding the tool on PATH stats each of its directories.
      get resume() {
        return [invocation(bin), ...words].join(' ')
      },
      keyRing: () => this.keyRing(),
    }
  }

  /** Where approvals are filed: the fleet's store when a state URL is set, else this machine's data dir. */
  protected async approvalStore(): Promise<ApprovalStore> {
    const fleet = await this.fleetPrimitives()
    if (fleet) return (await import('./fleet/ledgers.js')).sharedApprovalStore(fleet)
    return (await import('./approvals/store.js')).fileApprovalStore(this.config.dataDir)
  }

  /**
   * What the flow reads of the run's signal: whether it aborted, and why. Asked of the session without making the
   * signal, whose controller (Node's AbortController and event target modules) a write nobody interrupts never needs.
   */
  private interruption(): Interruption {
    const run = this.runState
    const interrupted = run?.interrupted
    if (!run || !interrupted) return this.signal
    return {
      get aborted() {
        return interrupted()
      },
      // An interrupted session has aborted its signal already: reading it makes nothing new.
      get reason() {
        return interrupted() ? run.signal.reason : undefined
      },
    }
  }

  /** This command's hooks as the flow calls them (each may be overridden by the tool). */
  private steps(): WriteSteps<S> {
    return {
      id: this.id!,
      risk: (this.constructor as typeof WriteCommand).risk ?? UNDECLARED_RISK,
      state: this.writeState,
      signal: this.interruption(),
      keyRing: () => this.keyRing(),
      tokenLedger: () => this.tokenLedger(),
      idempotencyLedger: () => this.idempotencyLedger(),
      plan: () => this.plan(),
      apply: (plan) => this.apply(plan),
      replayed: () => this.setMeta('replayed', true),
      rejectedBatch: (plan) => this.batchResult(this.rejectedItems(plan)),
    }
  }
}

addWaitFlags(WriteCommand, { ...GLOBAL_FLAGS, ...WRITE_FLAGS })
