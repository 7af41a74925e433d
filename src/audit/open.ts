import { inspectStateFile } from '../fs/state-file.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { type Caller, callerOf, osUser } from '../settings/caller.js'
import { toolEnv } from '../settings/tool-env.js'
import { openAudit } from './pending.js'
import { type AuditDraft, auditDraft, type DraftInput } from './record.js'

/**
 * Draft and open the run's record, on a fleet with the store's log as its shared sink. The entry calls this for
 * every non-read call as soon as the command is known (before any parse, so a refusal at parse is audited too);
 * a write command calls it again with its principal and mode once its flags are parsed.
 */
export async function startAudit(
  config: Pick<ToolConfig, 'dataDir' | 'bin'>,
  input: Omit<DraftInput, 'dataDir' | 'shared'>,
): Promise<AuditDraft> {
  // On a fleet the store's audit log gets every non-read call too, not only the writes.
  const shared = (await import('../fleet/audit-sink.js')).sharedAuditSink(config as ToolConfig)
  // Before a principal is known (a local command, a write refused at parse), the record still says who ran it.
  let who = {}
  let refused: unknown
  if (!input.principal)
    try {
      who = { caller: await caller(config.bin) }
    } catch (error) {
      // A profile the system policy refuses (or a system policy that cannot be trusted) is an attempt too: its
      // record is opened, with no profile (none was established), and then the call is refused.
      who = { caller: { profile: null, os_user: osUser() } }
      refused = error
    }
  const draft = openAudit(auditDraft({ ...input, ...who, dataDir: config.dataDir, shared }))
  if (refused !== undefined) throw refused
  return draft
}

/**
 * Who runs a call, as far as it is known without a principal: the profile (as a write's principal says: the one
 * the system policy pins, else `<BIN>_PROFILE`, else `default`) and the operating-system user (null when the
 * system cannot say).
 */
export function caller(bin: string, user?: () => string): Promise<Caller> {
  return callerOf(toolEnv(bin), user)
}

/**
 * Refuse a write whose record could not be kept: an `audit.jsonl` (or its directory) that is a link, another
 * user's, or writable by others is `E_CONFIG` before anything changes, not a warning after the write.
 */
export function checkAuditLog(draft: AuditDraft): void {
  if (!draft.shared || draft.shared.alsoFile) inspectStateFile(draft.path)
}
