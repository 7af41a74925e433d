import { type BatchData, batchOutcome } from '../confirm/batch.js'
import type { BatchItem } from '../confirm/preview.js'
import type { Catalogue } from '../errors/catalogue.js'
import { invocation, shellQuote } from '../runtime/invocation.js'
import type { WriteState } from './call.js'

/**
 * Per-item outcomes as batch data, the items that landed in an earlier run of the same batch reported
 * `already_applied`; with an idempotency key a failure names the dry-run that resumes the batch.
 */
export function batchData(
  items: BatchItem[],
  state: WriteState,
  catalogue: Catalogue,
  origin: { bin: string; id: string; argv: readonly string[]; keyFlag: boolean },
): BatchData {
  const resume = state.idempotencyKey ? resumeCommand(origin.bin, origin.id, origin.argv) : undefined
  return batchOutcome(items, state.landed, catalogue, resume, origin.keyFlag)
}

/** The dry-run that resumes this batch: the same invocation without its token, runnable as this tool was started. */
function resumeCommand(bin: string, id: string, argv: readonly string[]): string {
  const kept: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--confirm') i++
    else if (!a.startsWith('--confirm=') && a !== '--dry-run') kept.push(a)
  }
  return `${[invocation(bin), ...[...id.split(':'), ...kept].map(shellQuote)].join(' ')} --dry-run`
}
