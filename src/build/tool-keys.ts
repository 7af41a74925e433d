import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { addSensitiveKeys, prefilterMemo, resetRedaction } from '../output/redact.js'

/**
 * Run `fn` under the redaction rules every run of the tool at `root` starts with: no secret known, and the keys its
 * package.json declares (`agentcli.redact_keys`) declared as a run's session declares them
 * (src/runtime/session.ts). The process's rules are reset before and after. What the build stores for a run is made
 * here, so it is made under that run's rules (src/build/compact-memo.ts, {@link toolPrefilter}).
 */
export function underToolKeys<T>(root: string, fn: () => T): T {
  const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { agentcli?: { redact_keys?: unknown } }
  const declared = pjson.agentcli?.redact_keys
  resetRedaction()
  try {
    if (Array.isArray(declared)) addSensitiveKeys(declared as string[])
    return fn()
  } finally {
    resetRedaction()
  }
}

/**
 * The redaction prefilter of the tool's key words, which its bundle registers when it loads (src/output/redact.ts,
 * `rememberPrefilter`); undefined when the tool declares keys a run cannot declare either (the run says so).
 */
export function toolPrefilter(root: string): ReturnType<typeof prefilterMemo> {
  try {
    return underToolKeys(root, prefilterMemo)
  } catch {
    return undefined
  }
}
