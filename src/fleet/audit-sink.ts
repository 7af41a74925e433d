import type { AuditSink } from '../audit/record.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { type StateLocation, stateLocation, stateSettings } from './location.js'

/**
 * Where a fleet's audit records go besides (or instead of) `audit.jsonl`: the shared store's log (a table / a
 * stream), the local file too when `agentcli.state.audit_file` is set. Undefined on machine-local files. A state
 * URL that cannot be used keeps the record in the local file: the call itself reports that URL's `E_CONFIG`.
 */
export function sharedAuditSink(config: ToolConfig): AuditSink | undefined {
  let location: StateLocation
  try {
    location = stateLocation(config)
  } catch {
    return undefined
  }
  if (location.kind === 'file') return undefined
  return {
    append: async (record) => {
      const { openBackend } = await import('./backend.js')
      await (await openBackend(config))?.appendAudit(record)
    },
    alsoFile: stateSettings(config).audit_file === true,
  }
}
