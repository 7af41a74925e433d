import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Both tiers' global setup: one code-cache directory for the whole run, named to `sandbox()` by
 * `AGENTCLI_TEST_CODE_CACHE_DIR` (the workers start after this and inherit it), removed at the end. Kept outside the
 * workers: vitest ends them without their exit handlers, so a directory of a worker's own would be left behind.
 */
export default function setup(): () => void {
  if (process.env.AGENTCLI_TEST_CODE_CACHE_DIR) return () => {}
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-code-cache-run-'))
  process.env.AGENTCLI_TEST_CODE_CACHE_DIR = dir
  return () => {
    rmSync(dir, { recursive: true, force: true })
    delete process.env.AGENTCLI_TEST_CODE_CACHE_DIR
  }
}
