import type { ToolConfig } from '../runtime/tool-config.js'
import type { UpdateSettings } from './settings.js'
import { loadTrustedRoot } from './trust-root.js'

/** The Sigstore trusted root a tool's update verifies against: its pinned one, else refreshed through TUF. */
export async function toolTrustedRoot(config: ToolConfig, settings: UpdateSettings): Promise<unknown> {
  const { root } = await loadTrustedRoot({
    pinned: settings.trusted_root,
    mirror: settings.tuf_mirror,
    tufRoot: settings.tuf_root,
    cacheDir: config.cacheDir,
    timeoutMs: 10_000,
  })
  return root
}
