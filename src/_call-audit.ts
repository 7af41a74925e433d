import { join } from 'node:path'
import { setAudit } from './_state.js'
import type { AuditDraft } from './confirm/audit.js'

/** Flags whose value must never reach the audit log, whatever the command (a token is a bearer secret). */
const SECRET_FLAGS = new Set(['--confirm'])

/** The argv of a call as the audit log keeps it: confirm tokens replaced (values are redacted again on write). */
export function auditArgs(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const eq = a.indexOf('=')
    if (SECRET_FLAGS.has(a)) {
      out.push(a)
      if (i + 1 < argv.length) out.push('<token>')
      i++
    } else if (eq > 0 && SECRET_FLAGS.has(a.slice(0, eq))) out.push(`${a.slice(0, eq)}=<token>`)
    else out.push(a)
  }
  return out
}

/**
 * The audit draft every non-read call starts with, made by the entry as soon as the command is known, so that
 * a call refused before the command's own code runs (unknown flag, bad value, a failing init hook, a signal) is
 * audited too. A write command replaces it with its own, richer draft.
 */
export function callAudit(options: {
  dataDir: string
  id: string
  kind: 'local' | 'write'
  argv: readonly string[]
}): AuditDraft {
  return {
    path: join(options.dataDir, 'audit.jsonl'),
    command: options.id.replaceAll(':', ' '),
    kind: options.kind,
    args: auditArgs(options.argv),
    account: null,
    mode: options.kind === 'write' ? 'refused' : 'direct',
    token_id: null,
  }
}

/**
 * Register the audit draft of a non-read call with the run (the session appends it at the end), on a fleet with
 * the store's log as its shared sink: both paths, oclif's (`src/entry.ts`) and the fast one (`src/fast/run.ts`),
 * call this as soon as the command is known, before any parse.
 */
export async function auditCall(
  config: { dataDir: string },
  route: { id: string; kind: 'local' | 'write'; argv: readonly string[] },
): Promise<void> {
  const draft = callAudit({ dataDir: config.dataDir, ...route })
  // On a fleet the store's audit log gets every non-read call too, not only the writes.
  const shared = (await import('./fleet/audit-sink.js')).sharedAuditSink(config as never)
  if (shared) draft.shared = shared
  setAudit(draft)
}
