import { mkdtempSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * The spawn tier's global setup: one empty directory per test run where `oncePerRun()` (test/support/once-per-run.ts)
 * leaves what the first file that needs it makes: the agentcli tarball (`packedAgentcli()`), a Node 22
 * (`getNode22()`), the example without warm processes (`useColdTasks()`), the upstream tool built (`builtUptool()`).
 * Inside the repository (test/fixtures/, ignored by git), so that a tool made there resolves `agentcli` from the
 * root node_modules. Nothing is made here, so a run of files that need none of them pays for a mkdtemp only.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-run-'))
  project.provide('agentcliPackDir', dir)
  return () => rmSync(dir, { recursive: true, force: true })
}

declare module 'vitest' {
  export interface ProvidedContext {
    agentcliPackDir: string
  }
}
