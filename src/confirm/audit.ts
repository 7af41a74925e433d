import { appendFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { redactArgv, redactForOutput } from '../output/redact.js'

/** What a non-read call records before its outcome is known. */
export type AuditDraft = {
  path: string
  command: string
  /** The command's kind; set by the entry for every non-read call (a write's own draft inherits it). */
  kind?: 'local' | 'write'
  args: string[]
  /** The account the write acted as (the principal's `account`), not merely the OS user. */
  account: string | null
  /** The principal's profile, when known. */
  profile?: string | null
  /** The operating-system user who ran the tool, when known. */
  os_user?: string | null
  /**
   * A write's path through dry-run → confirm; `replay`: a completed idempotency key answered with its recorded
   * result (nothing was executed); `direct`: a local-state command, which needs no token.
   */
  mode: 'dry_run' | 'confirm' | 'refused' | 'replay' | 'direct'
  token_id: string | null
}

/** One line of `audit.jsonl` (spec 002 §10). */
export type AuditRecord = Omit<AuditDraft, 'path'> & {
  time: string
  result_code: string
  exit_code: number
  duration_ms: number
}

/** The audit log of a tool. */
export function auditPath(dataDir: string): string {
  return join(dataDir, 'audit.jsonl')
}

/**
 * Append one record. One `write` with O_APPEND per line keeps concurrent appends whole; everything is redacted,
 * and a failure to audit is reported on stderr rather than turning a completed write into an error.
 */
export function appendAudit(
  draft: AuditDraft,
  outcome: { result_code: string; exit_code: number; duration_ms: number },
): void {
  const { path, ...rest } = draft
  // The audit writer is one of the redactor's choke points: flag values of sensitive flags never reach the file.
  const record: AuditRecord = redactForOutput({
    time: new Date().toISOString(),
    ...rest,
    args: redactArgv(rest.args),
    ...outcome,
  })
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    appendFileSync(path, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: 'a' })
  } catch (error) {
    process.stderr.write(`warning: cannot append to the audit log ${path}: ${(error as Error).message}\n`)
  }
}
