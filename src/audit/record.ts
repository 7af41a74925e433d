import { join } from 'node:path'

/** How a call went through the audit's eyes (spec 002 §10). */
export type AuditMode = 'dry_run' | 'confirm' | 'refused' | 'replay' | 'direct'

/** What a non-read call records before its outcome is known. */
export type AuditDraft = {
  readonly path: string
  readonly command: string
  /** The command's kind; set by the entry for every non-read call (a write's own draft inherits it). */
  readonly kind?: 'local' | 'write'
  /** The call's argv as given: the writer scrubs it (tokens, secret flag values) when the record is appended. */
  readonly args: readonly string[]
  /** The account the write acted as (the principal's `account`), not merely the OS user. */
  readonly account: string | null
  /** The principal's profile, when known. */
  readonly profile?: string | null
  /** The operating-system user who ran the tool, when known. */
  readonly os_user?: string | null
  /** The authenticated remote subject a `tool mcp --http` call acted for (`sub (iss)`), when there was one. */
  readonly subject?: string
  /**
   * A write's path through dry-run → confirm; `replay`: a completed idempotency key answered with its recorded
   * result (nothing was executed); `direct`: a local-state command, which needs no token.
   */
  readonly mode: AuditMode
  readonly token_id: string | null
  /** A write the policy judged: the decision, the deciding rule, the policy's digest, whether only in shadow. */
  readonly policy?: PolicyNote
  /** The approvers whose signatures released the change, and the request they signed. */
  readonly approved_by?: readonly string[]
  readonly approval_request?: string
  /** A fleet's shared audit log (a table / a stream); the local file too when `alsoFile`, or when it fails. */
  readonly shared?: AuditSink
}

/** What a step of a call learns for its record: the mode it ended in, the token it minted or was shown. */
export type AuditFacts = {
  readonly mode?: AuditMode
  readonly token_id?: string | null
  readonly policy?: PolicyNote
  readonly approved_by?: readonly string[]
  readonly approval_request?: string
}

/** What the policy gate decided of a call, for its audit record. */
export type PolicyNote = {
  readonly decision: string
  readonly rule: string | null
  readonly digest: string
  readonly shadow: boolean
}

/** A fleet's shared audit log: `append` sends one record; `alsoFile` keeps `audit.jsonl` too. */
export type AuditSink = { append(record: AuditRecord): Promise<void>; alsoFile: boolean }

/** One line of `audit.jsonl` (spec 002 §10). */
export type AuditRecord = Omit<AuditDraft, 'path' | 'shared' | 'args'> & {
  time: string
  args: string[]
  result_code: string
  exit_code: number
  duration_ms: number
}

/** The audit log of a tool. */
export function auditPath(dataDir: string): string {
  return join(dataDir, 'audit.jsonl')
}

/** What the caller knows when a call's record is drafted. */
export type DraftInput = {
  dataDir: string
  /** The command id (`tasks:create`); the record names it with spaces. */
  id: string
  argv: readonly string[]
  /** The command's kind, known to the entry; a write command run without the entry has none. */
  kind?: 'local' | 'write'
  /** A write's principal: who acted. Without one the call is the entry's, before any parse. */
  principal?: Readonly<Record<string, unknown>>
  /** A write's mode from its flags; the entry's draft is `refused` for a write (until the flow says otherwise). */
  mode?: AuditMode
  /** Who runs a call drafted before any principal is known (the entry's draft): its profile and OS user. */
  caller?: { readonly profile: string | null; readonly os_user: string | null }
  shared?: AuditSink | undefined
}

/**
 * The one draft builder: a new, frozen record from what the caller knows. Its keys come in the order records
 * have always been written in (a write's record names its principal before its kind), so lines stay byte-stable.
 */
export function auditDraft(input: DraftInput): AuditDraft {
  const { principal, kind } = input
  const base = { path: auditPath(input.dataDir), command: input.id.replaceAll(':', ' ') }
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  const subject = subjectOf(principal?.subject)
  const draft: AuditDraft = principal
    ? {
        ...base,
        args: [...input.argv],
        account: text(principal.account),
        profile: text(principal.profile),
        os_user: text(principal.os_user),
        // A remote subject (tool mcp --http) only when there is one: other lines stay byte-stable.
        ...(subject !== undefined ? { subject } : {}),
        mode: input.mode ?? 'refused',
        token_id: null,
        ...(kind ? { kind } : {}),
      }
    : {
        ...base,
        ...(kind ? { kind } : {}),
        args: [...input.argv],
        account: null,
        ...(input.caller ? { profile: input.caller.profile, os_user: input.caller.os_user } : {}),
        mode: input.mode ?? (kind === 'write' ? 'refused' : 'direct'),
        token_id: null,
      }
  return Object.freeze(input.shared ? { ...draft, shared: input.shared } : draft)
}

/** A principal's remote subject as the audit names it: `sub` at `iss`. */
function subjectOf(value: unknown): string | undefined {
  const v = value as { iss?: unknown; sub?: unknown } | undefined
  return typeof v?.iss === 'string' && typeof v.sub === 'string' ? `${v.sub} (${v.iss})` : undefined
}

/** A new draft with what a step learnt; `kind` is never lost (a write's draft inherits the entry's). */
export function withFacts(draft: AuditDraft, facts: AuditFacts & { kind?: 'local' | 'write' }): AuditDraft {
  return Object.freeze({ ...draft, ...facts })
}
