import { inspectStateFile } from '../fs/state-file.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { openAudit } from './pending.js'
import { type AuditDraft, auditDraft, type DraftInput } from './record.js'

/**
 * Draft and open the run's record, on a fleet with the store's log as its shared sink. The entry calls this for
 * every non-read call as soon as the command is known (before any parse, so a refusal at parse is audited too);
 * a write command calls it again with its principal and mode once its flags are parsed.
 */
export async function startAudit(
  config: Pick<ToolConfig, 'dataDir'>,
  input: Omit<DraftInput, 'dataDir' | 'shared'>,
): Promise<AuditDraft> {
  // On a fleet the store's audit log gets every non-read call too, not only the writes. (The fast path's lite
  // config carries what the sink reads.)
  const shared = (await import('../fleet/audit-sink.js')).sharedAuditSink(config as ToolConfig)
  return openAudit(auditDraft({ ...input, dataDir: config.dataDir, shared }))
}

/**
 * Refuse a write whose record could not be kept: an `audit.jsonl` (or its directory) that is a link, another
 * user's, or writable by others is `E_CONFIG` before anything changes, not a warning after the write.
 */
export function checkAuditLog(draft: AuditDraft): void {
  if (!draft.shared || draft.shared.alsoFile) inspectStateFile(draft.path)
}
