import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

/**
 * The spawn tier's global setup: one empty directory per test run where `oncePerRun()` (test/support/once-per-run.ts)
 * leaves what the first file that needs it makes: the agentcli tarball (`packedAgentcli()`), a Node 22
 * (`getNode22()`). Nothing is made here, so a run of files that need neither pays for a mkdtemp only.
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
