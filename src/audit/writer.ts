import { closeSync, mkdirSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { openStateFile } from '../fs/state-file.js'
import { redactForOutput } from '../output/redact.js'
import { writeStderr } from '../output/stderr.js'
import { scrubArgv } from './argv.js'
import type { AuditDraft, AuditRecord } from './record.js'

/**
 * Append one record. One `write` with O_APPEND per line keeps concurrent appends whole; everything is redacted,
 * and a failure to audit is reported on stderr rather than turning a completed write into an error. The log is
 * opened without following a link (`openStateFile`): a planted link never turns the log into an append of the
 * caller's arguments to a file of the attacker's choosing. A write command checks the log before it writes.
 */
export async function appendAudit(
  draft: AuditDraft,
  outcome: { result_code: string; exit_code: number; duration_ms: number },
): Promise<void> {
  const { path, shared, ...rest } = draft
  // The audit writer is one of the redactor's choke points: tokens and the values of sensitive flags never reach
  // the file (nor the fleet's shared log); argv is scrubbed here, once, after every secret of the run is known.
  const record: AuditRecord = redactForOutput({
    time: new Date().toISOString(),
    ...rest,
    args: scrubArgv(rest.args),
    ...outcome,
  })
  let toFile = !shared || shared.alsoFile
  if (shared) {
    try {
      await shared.append(record)
    } catch (error) {
      // The record is never lost: the local file keeps it when the shared log cannot.
      writeStderr(`warning: cannot append to the shared audit log (${(error as Error).message}); kept in ${path}\n`)
      toFile = true
    }
  }
  if (!toFile) return
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    const fd = openStateFile(path, 'append')
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`)
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    const fix = error instanceof AgentError && typeof error.details.fix === 'string' ? ` (${error.details.fix})` : ''
    writeStderr(`warning: cannot append to the audit log ${path}: ${(error as Error).message}${fix}\n`)
  }
}
