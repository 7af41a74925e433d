import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

/**
 * The spawn tier's global setup: one empty directory per test run where `packedAgentcli()` (test/support/packed.ts)
 * leaves the agentcli tarball the first file that needs it packs. Nothing is packed here, so a run of files that
 * need no tarball pays for a mkdtemp only.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-packed-'))
  project.provide('agentcliPackDir', dir)
  return () => rmSync(dir, { recursive: true, force: true })
}

declare module 'vitest' {
  export interface ProvidedContext {
    agentcliPackDir: string
  }
}
