import { userInfo } from 'node:os'
import { join } from 'node:path'
import type { Interfaces } from '@oclif/core'
import { setAudit } from './_state.js'
import { AgentCommand, type CommandResult } from './command.js'
import type { AuditDraft } from './confirm/audit.js'
import type { IdempotencyLedger } from './confirm/idempotency.js'
import type { TokenLedger } from './confirm/ledger.js'
import type { BatchItem, Change } from './confirm/preview.js'
import type { SecretSource } from './confirm/secret.js'
import type { Binding } from './confirm/token.js'
import { AgentError, usageError } from './errors/agent-error.js'
import type { ErrorCode } from './errors/catalogue.js'
import { Flags } from './flags.js'
import { GLOBAL_FLAGS } from './globals.js'
import type { OutputSchema } from './schema.js'
import { envPrefix } from './tool-settings.js'

/**
 * What `plan()` returns: the preview, what the token binds, and private state for `apply()`. `state` is required
 * when `S` is (so `apply(plan)` reads `plan.state.title` without `!`), optional when `S` admits `undefined`.
 */
export type Plan<S = unknown> = {
  /** The changes, shown in the dry-run preview. */
  changes: Change[]
  /** The target resources and their versions (etag, changekey, updated_at); bound into the token. */
  targets?: Array<{ id: string; version: string | number | null }>
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

const PRESENTATION = new Set([...Object.keys(GLOBAL_FLAGS), 'dry-run', 'confirm'])

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
}

/** `AGENTCLI_NOW` (epoch ms or ISO 8601) fixes the clock for tests of expiry; otherwise the real time. */
function now(): number {
  const fixed = process.env.AGENTCLI_NOW
  if (!fixed) return Date.now()
  const n = /^\d+$/.test(fixed) ? Number(fixed) : Date.parse(fixed)
  return Number.isFinite(n) ? n : Date.now()
}

/**
 * A command that changes state. The base class owns the flow of spec 002 §7: no write without a valid,
 * unexpired, single-use token bound to exactly what was previewed. Implement `plan()` (reads only) and
 * `apply()` (does exactly the planned change). `S` is the state `plan()` hands `apply()`; `O` the output schema
 * `apply()`'s result is checked against (`WriteCommand<State, typeof created>`).
 */
export abstract class WriteCommand<S = unknown, O extends OutputSchema | undefined = undefined> extends AgentCommand {
  static override kind = 'write' as const
  static override baseFlags = { ...GLOBAL_FLAGS, ...WRITE_FLAGS }
  /** How long a confirm token stays valid. */
  static confirmTtlSeconds = 600

  /** Read the current state and describe the change. Must have no side effect. */
  abstract plan(): Promise<Plan<S>>
  /** Perform exactly the planned change and return the data of the envelope. */
  abstract apply(plan: Plan<S>): Promise<CommandResult<O>>

  /** Who is acting: bound into the token so a token minted for one account or profile fails for another. */
  protected async principal(): Promise<Record<string, unknown>> {
    let account: string | null = null
    try {
      account = userInfo().username
    } catch {}
    const profile = process.env[`${this.envPrefix}PROFILE`] ?? 'default'
    return { account, profile }
  }

  /** Where the confirm secret comes from: `<BIN>_CONFIRM_SECRET` (hex) if set, else the config dir's file. */
  protected async secretSource(): Promise<SecretSource> {
    const { envSecretSource, fileSecretSource } = await import('./confirm/secret.js')
    const name = `${this.envPrefix}CONFIRM_SECRET`
    const injected = process.env[name]
    return injected ? envSecretSource(name, injected) : fileSecretSource(this.config.configDir)
  }

  /** The consumed-token ledger. */
  protected async tokenLedger(): Promise<TokenLedger> {
    const { fileTokenLedger } = await import('./confirm/ledger.js')
    return fileTokenLedger(this.config.dataDir, (m) => this.warn(m))
  }

  /** The idempotency ledger. */
  protected async idempotencyLedger(): Promise<IdempotencyLedger> {
    const { fileIdempotencyLedger } = await import('./confirm/idempotency.js')
    return fileIdempotencyLedger(this.config.dataDir)
  }

  /** Turn per-item outcomes into batch data; any failed item fails the envelope (see docs/contract.md). */
  protected batchResult(items: BatchItem[]): {
    results: BatchItem[]
    summary: { ok_count: number; error_count: number }
  } {
    const summary = { ok_count: items.filter((i) => i.ok).length, error_count: items.filter((i) => !i.ok).length }
    const firstFailure = items.find((i): i is Extract<BatchItem, { ok: false }> => !i.ok)
    if (!firstFailure) return { results: items, summary }
    throw new AgentError(
      firstFailure.error.code as ErrorCode,
      `${summary.error_count} of ${items.length} items failed; first: ${firstFailure.id}: ${firstFailure.error.message}`,
      {
        details: { partial: summary.ok_count > 0, results: items, summary },
      },
    )
  }

  /** The rejected items of a plan, as batch items. */
  protected rejectedItems(plan: Plan<S>): BatchItem[] {
    return (plan.rejected ?? []).map((r) => ({
      id: r.id,
      ok: false,
      error: { code: r.error.code, message: r.error.message },
    }))
  }

  private get envPrefix(): string {
    return envPrefix(this.config.bin)
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
    const principal = await this.principal()
    const audit = this.draftAudit(principal, dryRun ? 'dry_run' : token ? 'confirm' : 'refused')

    if (key) {
      const seen = await (await this.idempotencyLedger()).lookup(this.id!, key, bound)
      if (seen.state === 'mismatch') throw (await import('./confirm/idempotency.js')).keyReused(key)
      if (seen.state === 'done' && !dryRun) {
        this.setMeta('replayed', true)
        return seen.data
      }
    }

    const plan = await this.plan()
    if (plan.changes.length === 0 && (plan.rejected?.length ?? 0) > 0) return this.batchResult(this.rejectedItems(plan))
    const binding: Binding = {
      command: this.id!,
      args: bound,
      targets: (plan.targets ?? []).map((t) => t.id),
      versions: Object.fromEntries((plan.targets ?? []).map((t) => [t.id, t.version])),
      principal,
    }

    if (dryRun) {
      const secret = await (await this.secretSource()).get()
      const { mintToken } = await import('./confirm/token.js')
      const { token: minted, claims } = mintToken(secret, binding, now(), ctor.confirmTtlSeconds * 1000)
      audit.token_id = claims.id
      const rejected = (plan.rejected ?? []).map((r) => ({
        id: r.id,
        error: { code: r.error.code, message: r.error.message },
      }))
      return {
        preview: { changes: plan.changes, ...(rejected.length > 0 ? { rejected } : {}) },
        confirm_token: minted,
        expires_at: new Date(claims.expiresAt).toISOString(),
      }
    }

    if (token === undefined) {
      const words = [this.config.bin, ...this.id!.split(':'), ...this.argv.filter((a) => a !== '--confirm')].map(
        shellQuote,
      )
      throw new AgentError(
        'E_CONFIRMATION_REQUIRED',
        `${this.id!.replaceAll(':', ' ')} changes state: run it with --dry-run first, then --confirm <token>`,
        {
          details: { dry_run_command: `${words.join(' ')} --dry-run`, changes: plan.changes.length },
        },
      )
    }

    const secret = await (await this.secretSource()).get()
    const ledger = await this.tokenLedger()
    const { readClaims, verifyToken } = await import('./confirm/token.js')
    const claims = readClaims(secret, token)
    if (claims) audit.token_id = claims.id
    if (claims && (await ledger.isUsed(claims.id))) throw this.refuse(audit, 'already_used')
    const verdict = verifyToken(secret, token, binding, now())
    if (!verdict.ok) throw this.refuse(audit, verdict.reason)
    // Consumed before apply: of N processes confirming one token, exactly one gets past this line.
    if (!(await ledger.consume(verdict.claims.id, verdict.claims.expiresAt))) throw this.refuse(audit, 'already_used')

    if (!key) return this.apply(plan)
    const { data, replayed } = await (await this.idempotencyLedger()).run(this.id!, key, bound, () => this.apply(plan))
    if (replayed) this.setMeta('replayed', true)
    return data
  }

  private draftAudit(principal: Record<string, unknown>, mode: AuditDraft['mode']): AuditDraft {
    const draft: AuditDraft = {
      path: join(this.config.dataDir, 'audit.jsonl'),
      command: this.id!.replaceAll(':', ' '),
      args: redactArgv(this.argv),
      account: typeof principal.account === 'string' ? principal.account : null,
      mode,
      token_id: null,
    }
    setAudit(draft)
    return draft
  }

  private refuse(audit: AuditDraft, reason: string): AgentError {
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
