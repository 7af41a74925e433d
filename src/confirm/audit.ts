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
  /** A fleet's shared audit log (a table / a stream); the local file too when `alsoFile`, or when it fails. */
  shared?: AuditSink
}

/** A fleet's shared audit log: `append` sends one record; `alsoFile` keeps `audit.jsonl` too. */
export type AuditSink = { append(record: AuditRecord): Promise<void>; alsoFile: boolean }

/** One line of `audit.jsonl` (spec 002 §10). */
export type AuditRecord = Omit<AuditDraft, 'path' | 'shared'> & {
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
export async function appendAudit(
  draft: AuditDraft,
  outcome: { result_code: string; exit_code: number; duration_ms: number },
): Promise<void> {
  const { path, shared, ...rest } = draft
  // The audit writer is one of the redactor's choke points: flag values of sensitive flags never reach the file
  // (nor the fleet's shared log).
  const record: AuditRecord = redactForOutput({
    time: new Date().toISOString(),
    ...rest,
    args: redactArgv(rest.args),
    ...outcome,
  })
  let toFile = !shared || shared.alsoFile
  if (shared) {
    try {
      await shared.append(record)
    } catch (error) {
      // The record is never lost: the local file keeps it when the shared log cannot.
      process.stderr.write(
        `warning: cannot append to the shared audit log (${(error as Error).message}); kept in ${path}\n`,
      )
      toFile = true
    }
  }
  if (!toFile) return
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    appendFileSync(path, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: 'a' })
  } catch (error) {
    process.stderr.write(`warning: cannot append to the audit log ${path}: ${(error as Error).message}\n`)
  }
}
