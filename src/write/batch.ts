import { type BatchData, batchOutcome } from '../confirm/batch.js'
import type { BatchItem } from '../confirm/preview.js'
import type { Catalogue } from '../errors/catalogue.js'
import type { WriteState } from './call.js'
import { dryRunCommand } from './dry-run.js'

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
  const resume = state.idempotencyKey ? dryRunCommand(origin.bin, origin.id, origin.argv) : undefined
  return batchOutcome(items, state.landed, catalogue, resume, origin.keyFlag)
}
