import { join } from 'node:path'
import type { Config } from '@oclif/core'
import { setAudit } from '../_state.js'
import type { AuditDraft } from '../confirm/audit.js'
import { sharedAuditSink } from '../fleet/audit-sink.js'

/**
 * The audit draft of one write call, registered with the run (it replaces the entry's, keeping its `kind`): who
 * acted, with which arguments (tokens never), in which mode. The flow refines `mode` and `token_id` as it goes.
 */
export function draftAudit(
  config: Config,
  id: string,
  argv: readonly string[],
  principal: Record<string, unknown>,
  mode: AuditDraft['mode'],
): AuditDraft {
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  const draft: AuditDraft = {
    path: join(config.dataDir, 'audit.jsonl'),
    command: id.replaceAll(':', ' '),
    args: redactArgv(argv),
    account: text(principal.account),
    profile: text(principal.profile),
    os_user: text(principal.os_user),
    mode,
    token_id: null,
  }
  const shared = sharedAuditSink(config)
  if (shared) draft.shared = shared
  setAudit(draft)
  return draft
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
