import type { KeyRing } from '../confirm/secret.js'
import type { ToolConfig } from '../runtime/tool-config.js'

/**
 * The tool's confirm key ring as `WriteCommand` reads it by default: the injected one a fleet shares
 * (`<BIN>_CONFIRM_SECRET` or `<BIN>_CONFIRM_SECRET_FILE`), else this machine's `confirm.secret` (created on first
 * use, as a dry run would), as one key without an id. What the server derives its own keys from (task ids, the
 * sealed state of input-required rounds) and MACs an elicitation approval with; a tool that overrides
 * `secretSource` verifies with its own keys, so what the server MACs fails closed there.
 */
export async function toolKeyRing(config: ToolConfig): Promise<KeyRing> {
  const { toolEnv } = await import('../settings/tool-env.js')
  const { injectedSecretSource } = await import('../fleet/key-ring.js')
  const injected = injectedSecretSource(toolEnv(config.bin).prefix)
  if (injected?.ring) return injected.ring()
  const { fileSecretSource } = await import('../confirm/secret.js')
  const key = await fileSecretSource(config.configDir).get()
  return { current: { id: null, key }, keys: new Map([[null, key]]) }
}
