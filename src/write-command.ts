import { join } from 'node:path'
import type { Interfaces } from '@oclif/core'
import { defaultPrincipal } from './_principal.js'
import { setAudit } from './_state.js'
import { addWaitFlags, WAIT_FLAGS } from './_wait-flags.js'
import { AgentCommand, type CommandResult } from './command.js'
import type { AuditDraft } from './confirm/audit.js'
import { type BatchData, batchOutcome, type LandedItem, withoutLanded } from './confirm/batch.js'
import type { IdempotencyLedger } from './confirm/idempotency.js'
import type { TokenLedger } from './confirm/ledger.js'
import type { BatchItem, Change } from './confirm/preview.js'
import type { KeyRing, SecretSource } from './confirm/secret.js'
import type { Target } from './confirm/targets.js'
import type { Binding, RejectReason } from './confirm/token.js'
import { AgentError, isAgentError, usageError } from './errors/agent-error.js'
import { changeCount, clearBeforeChange, isBeforeChange } from './errors/before-change.js'
import { Flags } from './flags.js'
import { sharedAuditSink } from './fleet/audit-sink.js'
import type { SharedPrimitives } from './fleet/ledgers.js'
import { GLOBAL_FLAGS } from './globals.js'
import { invocation, shellQuote } from './invocation.js'
import type { JobContext, JobPlan } from './jobs/runtime.js'
import type { JobRecord } from './jobs/types.js'
import type { OutputSchema } from './schema.js'
import { toolEnv } from './settings.js'

/**
 * What `plan()` returns: the preview, what the token binds, and private state for `apply()`. `state` is required
 * when `S` is (so `apply(plan)` reads `plan.state.title` without `!`), optional when `S` admits `undefined`.
 */
export type Plan<S = unknown> = {
  /** The changes, shown in the dry-run preview. */
  changes: Change[]
  /** The target resources and their versions (etag, changekey, updated_at); bound into the token. */
  targets?: Target[]
  /** Batch items that cannot be done; reported per item, never hiding the others. */
  rejected?: Array<{ id: string; error: AgentError }>
} & (undefined extends S
  ? {
      /** Private state handed to `apply()`; never printed. */
      state?: S
    }
  : {
      /** Private state handed to `apply()`; never printed. */
      state: S
    })

/** Flags every write command has. */
export const WRITE_FLAGS = {
  'dry-run': Flags.boolean({
    helpGroup: 'WRITE',
    description: 'Preview the change and get a confirm token; change nothing.',
  }),
  confirm: Flags.string({
    helpGroup: 'WRITE',
    helpValue: 'token',
    description: 'Apply the change previewed by --dry-run, with its token.',
  }),
}

/** `--idempotency-key` (alias `--request-id`) for create-like commands. */
export function idempotencyFlags(): { 'idempotency-key': Interfaces.OptionFlag<string | undefined> } {
  return {
    'idempotency-key': Flags.string({
      aliases: ['request-id'],
      helpGroup: 'WRITE',
      description: 'Make retries safe: a retry with the same key and arguments returns the first result.',
    }),
  }
}

// How the answer is delivered (`--wait`), not what is written: a token never binds it.
const PRESENTATION = new Set([...Object.keys(GLOBAL_FLAGS), ...Object.keys(WAIT_FLAGS), 'dry-run', 'confirm'])

/** The clock of every confirm-token decision (issue, expiry, ledger pruning). No setting moves it. */
function clock(): number {
  return Date.now()
}

/** What the worker of an async write receives: the plan recomputed there and checked against the confirmed one. */
export type WriteJobContext<S = unknown> = JobContext & { plan: Plan<S> }

/**
 * A command that changes state. The base class owns the flow of spec 002 §7: no write without a valid,
 * unexpired, single-use token bound to exactly what was previewed. Implement `plan()` (reads only) and
 * `apply()` (does exactly the planned change). `S` is the state `plan()` hands `apply()`; `O` the output schema
 * `apply()`'s result is checked against (`WriteCommand<State, typeof created>`). The check order is in
 * docs/contract.md ("What a token binds").
 */
export abstract class WriteCommand<S = unknown, O extends OutputSchema | undefined = undefined> extends AgentCommand {
  static override kind = 'write' as const
  static override baseFlags = { ...GLOBAL_FLAGS, ...WRITE_FLAGS }
  /** How long a confirm token stays valid. */
  static confirmTtlSeconds = 600
  /**
   * `required` (the default): a single-use ledger that cannot be read or written is `E_IO` and nothing is
   * applied. `best_effort` is the documented degraded mode: warn on stderr and apply without single-use.
   */
  static singleUse: 'required' | 'best_effort' = 'required'

  private confirmed: JobPlan | undefined
  /** Items of this batch that landed in an earlier run under the same idempotency key. */
  private landed: ReadonlyMap<string, LandedItem> = new Map()
  private idempotencyKey: string | undefined

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
    return defaultPrincipal(await this.credentials(), toolEnv(this.config.bin).prefix)
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
    return fileSecretSource(this.config.configDir, (m) => this.warn(m))
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
    if (fleet) return (await import('./fleet/ledgers.js')).sharedIdempotencyLedger(fleet)
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
    const resume = this.idempotencyKey ? resumeCommand(this.config.bin, this.id!, this.argv) : undefined
    return batchOutcome(items, this.landed, this.catalogue, resume)
  }

  /** The rejected items of a plan, as batch items. */
  protected rejectedItems(plan: Plan<S>): BatchItem[] {
    return (plan.rejected ?? []).map((r) => ({
      id: r.id,
      ok: false,
      error: { code: r.error.code, message: r.error.message },
    }))
  }

  /** An async write hands its worker the targets and versions that were confirmed. */
  protected override async submit(): ReturnType<AgentCommand['submit']> {
    if (!this.confirmed)
      throw new AgentError(
        'E_INTERNAL',
        `${this.id} submitted a job outside a confirmed write (call submit() from apply())`,
      )
    return super.submit({ plan: this.confirmed })
  }

  /**
   * In the worker: recompute the plan and apply it only if its targets and versions are exactly those that
   * were confirmed (a file swapped after the confirm is `E_CONFLICT`, nothing applied); `work` gets that plan.
   */
  override async runWork(ctx: JobContext, record: JobRecord): Promise<unknown> {
    const confirmed = record.plan
    if (!confirmed || !Array.isArray(confirmed.targets)) {
      throw new AgentError('E_CONFLICT', `job ${record.job_id} carries no confirmed plan; nothing was applied`, {
        details: {
          reason: 'unverified_job',
          fix: `run ${this.config.bin} ${this.id!.replaceAll(':', ' ')} with --dry-run, then --confirm`,
        },
      })
    }
    const { sameTargets, targetDrift } = await import('./confirm/targets.js')
    let plan: Plan<S>
    try {
      plan = await this.plan()
    } catch (error) {
      throw await this.goneOrRethrow(error, confirmed.targets, confirmed.token_id)
    }
    if (!sameTargets(plan.targets ?? [], confirmed.targets)) {
      const { reason, drift } = targetDrift(confirmed.targets, plan.targets ?? [])
      throw this.driftError(reason, drift, confirmed.token_id, 'the job changed nothing')
    }
    return this.work({ ...ctx, plan } as WriteJobContext<S>)
  }

  /** The write flow; tools implement `plan` and `apply` instead. */
  async execute(): Promise<unknown> {
    const ctor = this.constructor as typeof WriteCommand
    const { flags, args } = await this.parse(ctor as never)
    const f = flags as Record<string, unknown>
    const dryRun = f['dry-run'] === true
    const token = typeof f.confirm === 'string' ? f.confirm : undefined
    if (dryRun && token !== undefined)
      throw usageError('--dry-run and --confirm cannot be combined', { got: ['--dry-run', '--confirm'] })
    const bound: Record<string, unknown> = { ...(args as Record<string, unknown>) }
    for (const [name, value] of Object.entries(f))
      if (!PRESENTATION.has(name) && value !== undefined) bound[name] = value
    const key = typeof f['idempotency-key'] === 'string' ? (f['idempotency-key'] as string) : undefined
    this.idempotencyKey = key
    const principal = await this.principal()
    const audit = this.draftAudit(principal, dryRun ? 'dry_run' : token ? 'confirm' : 'refused')
    const binding: Binding = { tool: this.toolIdentity(), command: this.id!, args: bound, principal }
    const scope = key ? (await import('./confirm/idempotency.js')).idempotencyScope(binding.tool, principal) : ''

    if (token !== undefined) return this.confirm(token, binding, audit, key ? { key, scope } : undefined)

    if (key) {
      const seen = await (await this.idempotencyLedger()).lookup(scope, this.id!, key, bound)
      if (seen.state === 'mismatch') throw (await import('./confirm/idempotency.js')).keyReused(key)
      if (seen.state === 'done' && !dryRun) return this.replay(audit, seen.data)
      if (seen.state === 'partial') this.landed = new Map(seen.landed.map((l) => [l.id, l]))
    }

    const plan = withoutLanded(await this.plan(), this.landed)
    if (plan.changes.length === 0 && (plan.rejected?.length ?? 0) > 0) return this.batchResult(this.rejectedItems(plan))

    if (dryRun) {
      const { current } = await this.keyRing()
      const { mintToken } = await import('./confirm/token.js')
      const { token: minted, claims } = mintToken(
        current.key,
        binding,
        plan.targets ?? [],
        clock(),
        ctor.confirmTtlSeconds * 1000,
        current.id,
      )
      audit.token_id = claims.id
      const rejected = (plan.rejected ?? []).map((r) => ({
        id: r.id,
        error: { code: r.error.code, message: r.error.message },
      }))
      const landed = [...this.landed.values()]
      return {
        preview: {
          changes: plan.changes,
          ...(rejected.length > 0 ? { rejected } : {}),
          ...(landed.length > 0 ? { already_applied: landed } : {}),
        },
        confirm_token: minted,
        expires_at: new Date(claims.expiresAt).toISOString(),
      }
    }

    const words = [
      invocation(this.config.bin),
      ...[...this.id!.split(':'), ...this.argv.filter((a) => a !== '--confirm')].map(shellQuote),
    ]
    throw new AgentError(
      'E_CONFIRMATION_REQUIRED',
      `${this.id!.replaceAll(':', ' ')} changes state: run it with --dry-run first, then --confirm <token>`,
      {
        details: { dry_run_command: `${words.join(' ')} --dry-run`, changes: plan.changes.length },
      },
    )
  }

  /**
   * `--confirm`: everything the token binds that needs no state is checked before `plan()` reads any (so a
   * garbage, tampered, expired or foreign token learns nothing about the targets); then single use; then the
   * plan, its targets and versions; then the token is consumed and the change applied.
   */
  private async confirm(
    token: string,
    binding: Binding,
    audit: AuditDraft,
    idem: { key: string; scope: string } | undefined,
  ): Promise<unknown> {
    const ring = await this.keyRing()
    const { tokenKeyId, verifyToken, verifyTargets } = await import('./confirm/token.js')
    // The token names its key; a key no longer in the ring verifies nothing (its tokens have expired).
    const kid = tokenKeyId(token)
    const secret = kid === undefined ? ring.current.key : ring.keys.get(kid)
    if (!secret) throw this.refuse(audit, 'unknown_key')
    const verdict = verifyToken(secret, token, binding, clock())
    if (verdict.claims) audit.token_id = verdict.claims.id
    if (!verdict.ok) throw this.refuse(audit, verdict.reason)
    const claims = verdict.claims
    const ledger = idem ? await this.idempotencyLedger() : undefined
    if (idem && ledger) {
      const seen = await ledger.lookup(idem.scope, this.id!, idem.key, binding.args)
      if (seen.state === 'mismatch') throw (await import('./confirm/idempotency.js')).keyReused(idem.key)
      if (seen.state === 'done') return this.replay(audit, seen.data)
      if (seen.state === 'partial') this.landed = new Map(seen.landed.map((l) => [l.id, l]))
    }
    const used = await this.tokenLedger()
    if (await used.isUsed(claims.id)) throw this.refuse(audit, 'already_used')
    let plan: Plan<S>
    try {
      plan = withoutLanded(await this.plan(), this.landed)
    } catch (error) {
      audit.mode = 'refused'
      throw await this.goneOrRethrow(error, claims.targets, claims.id)
    }
    const targets = verifyTargets(secret, claims, plan.targets ?? [])
    if (!targets.ok) {
      audit.mode = 'refused'
      throw this.driftError(targets.reason, targets.drift, claims.id)
    }
    // The plan may have taken a while: expiry is judged again, on the same clock, right before the commit point.
    const now = clock()
    if (now >= claims.expiresAt) throw this.refuse(audit, 'expired')
    if (plan.changes.length === 0 && (plan.rejected?.length ?? 0) > 0) return this.batchResult(this.rejectedItems(plan))
    // Consumed before apply: of N processes confirming one token, exactly one gets past this line.
    if (!(await used.consume(claims.id, claims.expiresAt, now))) throw this.refuse(audit, 'already_used')
    this.confirmed = { token_id: claims.id, targets: plan.targets ?? [] }
    try {
      if (!idem || !ledger) return await this.guardedApply(plan)
      const { data, replayed } = await ledger.run(
        idem.scope,
        this.id!,
        idem.key,
        binding.args,
        () => this.guardedApply(plan),
        [...this.landed.keys()],
      )
      if (replayed) {
        // Another process finished the same key meanwhile: this token did nothing, so give it back.
        await used.release(claims.id)
        return this.replay(audit, data)
      }
      return data
    } catch (error) {
      // A failure known to precede any change gives the token back: a retry with it is honest.
      if (isBeforeChange(error)) await used.release(claims.id)
      throw error
    }
  }

  /** `apply()`, with the "nothing changed" mark of its failure kept only if the framework saw no change. */
  private async guardedApply(plan: Plan<S>): Promise<unknown> {
    const before = changeCount()
    try {
      return await this.apply(plan)
    } catch (error) {
      if (changeCount() !== before) clearBeforeChange(error)
      throw error
    }
  }

  private replay(audit: AuditDraft, data: unknown): unknown {
    audit.mode = 'replay'
    this.setMeta('replayed', true)
    return data
  }

  /** A target the plan can no longer find, after a valid token, is drift (exit 6), not "not found" (exit 3). */
  private async goneOrRethrow(error: unknown, then: readonly Target[] | undefined, tokenId: string): Promise<unknown> {
    if (!isAgentError(error) || error.code !== 'E_NOT_FOUND') return error
    const { goneDrift } = await import('./confirm/targets.js')
    return this.driftError('state_drift', goneDrift(then, error.details.id), tokenId, undefined, error)
  }

  private driftError(
    reason: 'target_changed' | 'state_drift',
    drift: ReadonlyArray<{ id: string }>,
    tokenId: string,
    note = 'nothing was changed',
    cause?: unknown,
  ): AgentError {
    // Each target with the version it had at the dry-run and has now, so the caller sees what moved.
    const named = drift.length > 0 ? `: ${drift.map(driftText).join(', ')}` : ''
    return new AgentError('E_CONFLICT', `the targets moved since the dry-run${named}; ${note}`, {
      details: { reason, token_id: tokenId, drift, fix: 'run the command again with --dry-run for a new token' },
      cause,
    })
  }

  private draftAudit(principal: Record<string, unknown>, mode: AuditDraft['mode']): AuditDraft {
    const text = (v: unknown) => (typeof v === 'string' ? v : null)
    const draft: AuditDraft = {
      path: join(this.config.dataDir, 'audit.jsonl'),
      command: this.id!.replaceAll(':', ' '),
      args: redactArgv(this.argv),
      account: text(principal.account),
      profile: text(principal.profile),
      os_user: text(principal.os_user),
      mode,
      token_id: null,
    }
    const shared = sharedAuditSink(this.config)
    if (shared) draft.shared = shared
    setAudit(draft)
    return draft
  }

  private refuse(audit: AuditDraft, reason: RejectReason): AgentError {
    audit.mode = 'refused'
    return new AgentError('E_CONFLICT', `confirm token refused: ${reason.replaceAll('_', ' ')}`, {
      details: {
        reason,
        ...(audit.token_id ? { token_id: audit.token_id } : {}),
        fix: 'run the command again with --dry-run for a new token',
      },
    })
  }
}

/** Never write a token or a secret-looking flag value into the audit log. */
function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--confirm') {
      out.push(a, '<token>')
      i++
    } else if (a.startsWith('--confirm=')) out.push('--confirm=<token>')
    else out.push(a)
  }
  return out
}

addWaitFlags(WriteCommand, { ...GLOBAL_FLAGS, ...WRITE_FLAGS })

function driftText(d: { id: string; version_then?: unknown; version_now?: unknown; gone?: boolean }): string {
  const short = (v: unknown) => {
    const text = String(v)
    return text.length > 16 ? `${text.slice(0, 12)}…` : text
  }
  if (!('version_then' in d)) return d.id
  return `${d.id} (version ${short(d.version_then)} then, ${d.gone ? 'gone' : `${short(d.version_now)}`} now)`
}

/** The dry-run that resumes this batch: the same invocation without its token. */
function resumeCommand(bin: string, id: string, argv: readonly string[]): string {
  const kept: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--confirm') i++
    else if (!a.startsWith('--confirm=') && a !== '--dry-run') kept.push(a)
  }
  return `${[bin, ...id.split(':'), ...kept].map(shellQuote).join(' ')} --dry-run`
}
